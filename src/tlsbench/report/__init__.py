# SPDX-License-Identifier: Apache-2.0
"""Report: figures and the self-contained offline HTML report."""

# Which winners sections a report shows (`tlsbench report --winners`); the first is the default.
WINNERS_MODES = ("both", "overall", "per-library")
