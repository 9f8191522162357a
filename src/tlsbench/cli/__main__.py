# SPDX-License-Identifier: Apache-2.0
"""`python -m tlsbench.cli`: the same command line as `tlsbench`."""
from tlsbench.cli import main

main()
