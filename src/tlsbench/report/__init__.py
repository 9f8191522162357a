# SPDX-License-Identifier: Apache-2.0
"""Report: figures and the self-contained offline HTML report."""
