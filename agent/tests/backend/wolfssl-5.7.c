/* SPDX-License-Identifier: Apache-2.0 */
/* The conformance expectations of the wolfSSL 5.7 agent (cached_libraries.cmake): the wolfSSL
 * backend's, whose differences between 5.5 and 5.7 are tables chosen by the version. */
#include "wolfssl.c"
