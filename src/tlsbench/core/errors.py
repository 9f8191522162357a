# SPDX-License-Identifier: Apache-2.0
"""The one base class of every error a user can act on.

Each stage raises its own kind (a plan's, an agent's, the store's...), all derived from
UserError, so the command line's error boundary (cli/) prints any of them as one plain
line without knowing the stages that raise them."""
from __future__ import annotations


class UserError(Exception):
    """What happened and what to do, in one message: printed as `error: ...`, exit status 1."""
