# SPDX-License-Identifier: Apache-2.0
# wolfSSL in the firmware: the host agent's backend (src/backends/wolfssl*.c) with the device's
# glue (wolfssl_device.c: the DRBG's seed, the ticket clock), against the library cross-built
# with the build's user_settings.h (spec/libraries.toml [device."wolfssl@..."]), which the
# prefix's wolfssl/options.h includes. Sets TB_FW_BACKEND_SOURCES, _LIBS (link order), _WRAP
# (link options), _INCLUDES and _DEFINES.
set(tb_dir ${TB_AGENT_DIR}/src/backends)
include(${TB_AGENT_DIR}/creds/creds.cmake)
include(${TB_AGENT_DIR}/src/primitives/primitives.cmake)
tb_wrapped_symbols(${tb_dir}/wolfssl_wrap.h tb_symbols)
tb_wrapped_symbols(${tb_dir}/wolfssl_wrap_5_7.h tb_symbols_version)

set(TB_FW_BACKEND_SOURCES ${tb_dir}/common.c ${tb_dir}/wolfssl.c ${tb_dir}/wolfssl_crypto.c ${tb_dir}/wolfssl_device.c
    ${TB_PRIMITIVES_COMMON} ${TB_PRIMITIVES_DIR}/wolfssl.c)
set(TB_FW_BACKEND_LIBS tb_credentials tb_primitives_kat ${TB_FW_LIBRARY_ARCHIVES} m) # libm: log, pow
set(TB_FW_BACKEND_WRAP)
foreach(sym IN LISTS tb_symbols tb_symbols_version)
  list(APPEND TB_FW_BACKEND_WRAP "-Wl,--wrap=${sym}")
endforeach()
set(TB_FW_BACKEND_INCLUDES ${TB_FW_LIBRARY_PREFIX}/include ${tb_dir} ${TB_PRIMITIVES_DIR})
# _POSIX_C_SOURCE: newlib declares strtok_r only then (the host's core builds with it too).
set(TB_FW_BACKEND_DEFINES WOLFSSL_USER_SETTINGS _POSIX_C_SOURCE=200809L)
