# SPDX-License-Identifier: Apache-2.0
# mbed TLS 3.x in the firmware: the host agent's 3.6 backend (src/backends/mbedtls3*.c,
# mbedtls_shared.c) with the device's entropy glue, against the library cross-built with the
# build's config (spec/libraries.toml [device."mbedtls@3.6..."]). Sets what mbedtls.cmake sets.
set(tb_dir ${TB_AGENT_DIR}/src/backends)
include(${CMAKE_CURRENT_LIST_DIR}/mbedtls_common.cmake)
tb_fw_mbedtls_backend(mbedtls3_wrap.h mbedtls3.c mbedtls3_crypto.c)
list(APPEND TB_FW_BACKEND_DEFINES TB_MBED3_MAX_SUITES=${TB_FW_MAX_SUITES} "TB_MBEDTLS3_SOURCE=\"${TB_FW_LIBRARY_ORIGIN}\"")
