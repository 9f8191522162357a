# SPDX-License-Identifier: Apache-2.0
"""Building TLS libraries from Debian source packages.

    debian.py     apt configured for one Debian suite's sources, in a folder of its own
    libraries.py  the recipes (mbedtls@3.6, openssl@3.5, wolfssl@5.7) and the build cache
    commands.py   `tlsbench libs build|list`
    shell.py      running build commands, with one clear error when one fails"""
