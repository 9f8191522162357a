# SPDX-License-Identifier: Apache-2.0
"""Energy per step, handshake and record, two ways (docs/energy.md):

- estimated from a device power profile (profiles.py, estimate.py): power × measured time,
  always labelled "estimate (profile X)";
- measured from a power analyzer's current capture (capture.py, align.py, measure.py):
  aligned to the trace by the agent's marker pulses, integrated per step, stored in the
  experiment's store (stored.py decides what is written; the store writes it).

results.py collects both for an analysed experiment; report/energy.py is the report's
energy section, cli/energy.py is `tlsbench energy`.
"""
from tlsbench.core.errors import UserError


class EnergyError(UserError, ValueError):
    """A problem the user can act on (a profile, a capture, an alignment): one clear message;
    nothing has been written to the store."""
