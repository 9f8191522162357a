# SPDX-License-Identifier: Apache-2.0
"""The application: run, resume, derive, device setup as plain functions (no click)."""
