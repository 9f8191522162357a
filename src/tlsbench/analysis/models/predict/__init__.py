# SPDX-License-Identifier: Apache-2.0
"""Predicted handshake duration, energy and bytes over a link, from what a run stored
(docs/predict.md). Everything here is a prediction, labelled so wherever it is shown: the
inputs are measurements (each peer's processing per step, the bytes of every send and
receive), the link and the network stacks are a model.

- links.py: link presets (spec/links.toml, shared with tlsbench-link) and free parameters;
- script.py: per repetition and peer, the ordered actions of its trace (compute, send n
  bytes, need the first n bytes of the other peer's stream);
- sim.py: a discrete-event simulation of both peers over the link (TCP with Linux's
  timers and acknowledgements, or UDP with the DTLS retransmission timer);
- model.py: predictions per configuration (Monte Carlo over loss), energy from a power
  profile; crossovers over a swept link parameter; validation against the emulator.
"""
from tlsbench.core.errors import UserError


class PredictError(UserError, ValueError):
    """A problem the user can act on (a link, a parameter, a store without what a prediction
    needs): one clear message."""
