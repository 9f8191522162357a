# SPDX-License-Identifier: Apache-2.0
# mbed TLS in the firmware: the host agent's backend (src/backends/mbedtls*.c) with the
# device's entropy glue, against the library cross-built with the board's config
# (TB_FW_LIBRARY_CONFIG, embedded for HELLO's build.config). Sets TB_FW_BACKEND_SOURCES,
# _LIBS (link order), _WRAP (link options), _INCLUDES and _DEFINES.
set(tb_dir ${TB_AGENT_DIR}/src/backends)
set(tb_prefix ${TB_FW_LIBRARY_PREFIX})
if(EXISTS ${tb_prefix}/include/mbedtls/build_info.h)
  # The backend's version switch lives here: mbed TLS 3.6 needs its own backend sources.
  message(FATAL_ERROR "${tb_prefix} is mbed TLS 3.x: the firmware has no mbed TLS 3 backend yet "
                      "(add its sources to agent/firmware/backends/mbedtls.cmake)")
endif()

include(${TB_AGENT_DIR}/creds/creds.cmake)
include(${TB_AGENT_DIR}/src/primitives/primitives.cmake)
tb_wrapped_symbols(${tb_dir}/mbedtls_wrap.h tb_symbols)

# The config header under a fixed name (a user's "ssl.h" must not shadow mbedtls/ssl.h), and
# its text embedded for HELLO.
set(tb_config_c ${TB_GEN_DIR}/mbedtls_config_gen.c)
configure_file(${TB_FW_LIBRARY_CONFIG} ${TB_GEN_DIR}/mbedtls_config/tlsbench_mbedtls_config.h COPYONLY)
add_custom_command(
  OUTPUT ${tb_config_c}
  COMMAND Python3::Interpreter ${TB_AGENT_DIR}/tools/embed_config.py custom ${TB_FW_LIBRARY_CONFIG} ${tb_config_c} --text
  DEPENDS ${TB_FW_LIBRARY_CONFIG} ${TB_AGENT_DIR}/tools/embed_config.py
  COMMENT "Embedding the mbed TLS config header (${TB_FW_LIBRARY_CONFIG})"
  VERBATIM)

set(TB_FW_BACKEND_SOURCES ${tb_dir}/common.c ${tb_dir}/mbedtls_shared.c ${tb_dir}/mbedtls.c ${tb_dir}/mbedtls_crypto.c
    ${tb_dir}/mbedtls_device.c ${tb_config_c} ${TB_PRIMITIVES_COMMON} ${TB_PRIMITIVES_DIR}/mbedtls.c)
set(TB_FW_BACKEND_LIBS tb_credentials tb_primitives_kat ${tb_prefix}/lib/libmbedtls.a
    ${tb_prefix}/lib/libmbedx509.a ${tb_prefix}/lib/libmbedcrypto.a)
set(TB_FW_BACKEND_WRAP)
foreach(sym IN LISTS tb_symbols)
  list(APPEND TB_FW_BACKEND_WRAP "-Wl,--wrap=${sym}")
endforeach()
set(TB_FW_BACKEND_INCLUDES ${tb_prefix}/include ${TB_GEN_DIR}/mbedtls_config ${tb_dir} ${TB_PRIMITIVES_DIR})
set(TB_FW_BACKEND_DEFINES MBEDTLS_CONFIG_FILE="tlsbench_mbedtls_config.h" TB_MBED_MAX_SUITES=${TB_FW_MAX_SUITES})
