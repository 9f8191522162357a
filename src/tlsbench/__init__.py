# SPDX-License-Identifier: Apache-2.0
"""tlsbench: what TLS and DTLS cost on a constrained device."""

__version__ = "0.1.0"
