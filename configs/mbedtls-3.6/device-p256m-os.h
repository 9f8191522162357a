/* SPDX-License-Identifier: Apache-2.0 */
/* device-p256m.h compiled for size, as the published p256-m figures were (p256-m's README,
 * "Runtime performance": its on-target benchmark built with `mbed compile`, whose default
 * profile compiles GCC code with -Os): `tlsbench validate cycles` builds the
 * mbedtls@3.6+p256m firmware with this header for the rows that name it (spec/cycles/
 * published.toml `config`), so the instruction stream it counts is the one the board ran.
 * The pragma applies to every function defined after the config is included: the whole
 * library (p256-m.c includes it through mbedtls/platform_util.h before its code) and the
 * firmware code that includes mbed TLS headers. */
#include "device-p256m.h"

#pragma GCC optimize("Os")
