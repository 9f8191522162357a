/* SPDX-License-Identifier: Apache-2.0 */
/* The conformance expectations of the OpenSSL 3.5 agent (cached_libraries.cmake): the OpenSSL
 * backend's, whose differences between 3.0 and 3.5 are tables chosen by the version. */
#include "openssl.c"
