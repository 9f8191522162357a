# SPDX-License-Identifier: Apache-2.0
"""The experiment store: its roles as protocols and the locator (api.py), the SQLite
implementation (sqlite/), and what status and trace show read (progress.py). The only code
that speaks SQL."""
