# SPDX-License-Identifier: Apache-2.0
"""Analysis: pure functions of the store (slices, measures, statistics, winners, groups)."""
