# SPDX-License-Identifier: Apache-2.0
# What both mbed TLS backends of the firmware share (mbedtls.cmake: 2.28, mbedtls3.cmake: 3.x):
# tb_fw_mbedtls_backend(<wrap list> <backend source> <crypto wrappers source>) sets
# TB_FW_BACKEND_SOURCES, _LIBS (link order), _WRAP (link options), _INCLUDES and _DEFINES.
include(${TB_AGENT_DIR}/creds/creds.cmake)
include(${TB_AGENT_DIR}/src/primitives/primitives.cmake)

function(tb_fw_mbedtls_backend wrap_list backend crypto)
  set(dir ${TB_AGENT_DIR}/src/backends)
  tb_wrapped_symbols(${dir}/${wrap_list} symbols)
  # The config header under a fixed name (a user's "ssl.h" must not shadow mbedtls/ssl.h), and
  # its text embedded for HELLO.
  set(config_c ${TB_GEN_DIR}/mbedtls_config_gen.c)
  configure_file(${TB_FW_LIBRARY_CONFIG} ${TB_GEN_DIR}/mbedtls_config/tlsbench_mbedtls_config.h COPYONLY)
  add_custom_command(
    OUTPUT ${config_c}
    COMMAND Python3::Interpreter ${TB_AGENT_DIR}/tools/embed_config.py custom ${TB_FW_LIBRARY_CONFIG} ${config_c} --text
    DEPENDS ${TB_FW_LIBRARY_CONFIG} ${TB_AGENT_DIR}/tools/embed_config.py
    COMMENT "Embedding the mbed TLS config header (${TB_FW_LIBRARY_CONFIG})"
    VERBATIM)
  set(wrap)
  foreach(sym IN LISTS symbols)
    list(APPEND wrap "-Wl,--wrap=${sym}")
  endforeach()
  set(TB_FW_BACKEND_SOURCES ${dir}/common.c ${dir}/mbedtls_shared.c ${dir}/${backend} ${dir}/${crypto}
      ${dir}/mbedtls_device.c ${config_c} ${TB_PRIMITIVES_COMMON} ${TB_PRIMITIVES_DIR}/mbedtls.c PARENT_SCOPE)
  set(TB_FW_BACKEND_LIBS tb_credentials tb_primitives_kat ${TB_FW_LIBRARY_ARCHIVES} PARENT_SCOPE)
  set(TB_FW_BACKEND_WRAP ${wrap} PARENT_SCOPE)
  set(TB_FW_BACKEND_INCLUDES ${TB_FW_LIBRARY_PREFIX}/include ${TB_GEN_DIR}/mbedtls_config ${dir} ${TB_PRIMITIVES_DIR}
      PARENT_SCOPE)
  set(TB_FW_BACKEND_DEFINES MBEDTLS_CONFIG_FILE="tlsbench_mbedtls_config.h" PARENT_SCOPE)
endfunction()
