/* SPDX-License-Identifier: Apache-2.0 */
/* The wolfSSL runner-level trace tests (test_wolfssl_trace.c) against the wolfSSL 5.7 agent. */
#include "test_wolfssl_trace.c"
