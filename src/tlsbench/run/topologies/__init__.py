# SPDX-License-Identifier: Apache-2.0
"""How a configuration's peers are placed: both in one agent, or two agents over a network."""
