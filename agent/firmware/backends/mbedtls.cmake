# SPDX-License-Identifier: Apache-2.0
# mbed TLS 2.28 in the firmware: the host agent's backend (src/backends/mbedtls*.c) with the
# device's entropy glue, against the library cross-built with the board's config
# (TB_FW_LIBRARY_CONFIG, embedded for HELLO's build.config). mbed TLS 3.x: mbedtls3.cmake.
# Sets TB_FW_BACKEND_SOURCES, _LIBS (link order), _WRAP (link options), _INCLUDES and _DEFINES.
set(tb_dir ${TB_AGENT_DIR}/src/backends)
include(${CMAKE_CURRENT_LIST_DIR}/mbedtls_common.cmake)
tb_fw_mbedtls_backend(mbedtls_wrap.h mbedtls.c mbedtls_crypto.c)
list(APPEND TB_FW_BACKEND_DEFINES TB_MBED_MAX_SUITES=${TB_FW_MAX_SUITES})
