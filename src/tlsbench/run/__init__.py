# SPDX-License-Identifier: Apache-2.0
"""Running a plan's configurations: the agents it talks to (endpoints/), where each
configuration's peers run (topologies/), the framed protocol, the schedule, and the
controller, a small loop over one interface (an Exchange runs a batch and yields
repetitions) that hands every repetition to a Sink (the store implements it)."""
