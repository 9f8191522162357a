# SPDX-License-Identifier: Apache-2.0
"""The store contract: tests against store/api.py, run for every implementation (conftest.py)."""
