#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages tlsbench needs, only those missing (idempotent, quiet when
# nothing is to do). Called by `make`; safe to run by hand.
set -euo pipefail

packages=(
    build-essential cmake pkg-config        # the agent's build
    python3 python3-venv python3-pip        # the host tool's virtual environment
    libmbedtls-dev libssl-dev libwolfssl-dev # the TLS libraries (static .a included)
    openssl                                 # generates the test credentials at build time
    dpkg-dev                                # apt-get source mbedtls (tlsbench build mbedtls)
    clang libclang-rt-14-dev                # libFuzzer target for the frame decoder
    chromium                                # renders the HTML report in the tests
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing missing Debian packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
