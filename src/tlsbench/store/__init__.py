# SPDX-License-Identifier: Apache-2.0
"""The experiment store: one SQLite file per experiment (schema: migrations/)."""
