# SPDX-License-Identifier: Apache-2.0
# The mbed TLS 2.28 backend: tlsbench-agent-mbedtls(-notrace), linked statically against
# the library so --wrap can trace its crypto operations (mbedtls_wrap.h is the one list).
# A custom build (`tlsbench build mbedtls`) points the TB_MBEDTLS_* paths at its own headers
# and libraries and sets the two variables below: tlsbench-agent-mbedtls-<name>.
set(TB_MBEDTLS_DIR ${CMAKE_CURRENT_LIST_DIR})
set(TB_MBEDTLS_BUILD_NAME "" CACHE STRING
    "Custom mbed TLS build name: the agent becomes tlsbench-agent-mbedtls-<name> (empty: the default build)")
set(TB_MBEDTLS_CONFIG_FILE "" CACHE FILEPATH
    "The config header the custom library was built with (MBEDTLS_CONFIG_FILE); empty: mbedtls/config.h")

find_path(TB_MBEDTLS_INCLUDE mbedtls/ssl.h)
find_library(TB_MBEDTLS_LIB NAMES libmbedtls.a)
find_library(TB_MBEDX509_LIB NAMES libmbedx509.a)
find_library(TB_MBEDCRYPTO_LIB NAMES libmbedcrypto.a)
if(NOT TB_MBEDTLS_INCLUDE OR NOT TB_MBEDTLS_LIB OR NOT TB_MBEDX509_LIB OR NOT TB_MBEDCRYPTO_LIB)
  message(STATUS "mbed TLS headers or static libraries not found: tlsbench-agent-mbedtls is not "
                 "built (Debian: apt-get install libmbedtls-dev)")
  return()
endif()
file(STRINGS ${TB_MBEDTLS_INCLUDE}/mbedtls/version.h tb_mbedtls_version
     REGEX "^#define MBEDTLS_VERSION_STRING +\"")
if(NOT tb_mbedtls_version MATCHES "\"2\\.")
  message(STATUS "mbed TLS ${tb_mbedtls_version}: the backend needs 2.x; not built")
  return()
endif()

include(${TB_MBEDTLS_DIR}/../../creds/creds.cmake)
include(${TB_MBEDTLS_DIR}/../primitives/primitives.cmake)
find_package(Threads REQUIRED) # MBEDTLS_THREADING_PTHREAD in Debian's build

tb_wrapped_symbols(${TB_MBEDTLS_DIR}/mbedtls_wrap.h TB_MBEDTLS_WRAP)
# calloc/free: the heap of a memory-collecting agent (mbedtls_heap.c; docs/metrics.md).
list(APPEND TB_MBEDTLS_WRAP calloc free)

# Order matters for static archives: ssl needs x509 needs crypto.
set(TB_MBEDTLS_LIBS tb_credentials tb_primitives_kat ${TB_MBEDTLS_LIB} ${TB_MBEDX509_LIB} ${TB_MBEDCRYPTO_LIB} Threads::Threads)

# The config the library was built with, embedded for HELLO (name, SHA-256; the text for a
# custom build). The backend is compiled with the same config: struct layouts and feature
# macros must match the library's.
set(tb_mbedtls_config_c ${TB_GEN_DIR}/mbedtls_config_gen.c)
set(tb_mbedtls_includes ${TB_MBEDTLS_INCLUDE} ${TB_MBEDTLS_DIR})
set(tb_mbedtls_defines)
if(TB_MBEDTLS_CONFIG_FILE)
  set(tb_mbedtls_agent mbedtls-${TB_MBEDTLS_BUILD_NAME})
  set(tb_mbedtls_config ${TB_MBEDTLS_CONFIG_FILE})
  set(tb_mbedtls_embed custom ${tb_mbedtls_config} ${tb_mbedtls_config_c} --text)
  # A fixed name: a user's "ssl.h" must not shadow mbedtls/ssl.h inside the library's headers.
  configure_file(${tb_mbedtls_config} ${TB_GEN_DIR}/mbedtls_config/tlsbench_mbedtls_config.h COPYONLY)
  list(APPEND tb_mbedtls_includes ${TB_GEN_DIR}/mbedtls_config)
  set(tb_mbedtls_defines MBEDTLS_CONFIG_FILE="tlsbench_mbedtls_config.h")
  if(NOT TB_MBEDTLS_BUILD_NAME)
    message(FATAL_ERROR "TB_MBEDTLS_CONFIG_FILE needs TB_MBEDTLS_BUILD_NAME (the agent's name suffix)")
  endif()
else()
  set(tb_mbedtls_agent mbedtls)
  set(tb_mbedtls_config ${TB_MBEDTLS_INCLUDE}/mbedtls/config.h)
  set(tb_mbedtls_embed library ${tb_mbedtls_config} ${tb_mbedtls_config_c})
endif()
add_custom_command(
  OUTPUT ${tb_mbedtls_config_c}
  COMMAND Python3::Interpreter ${TB_AGENT_DIR}/tools/embed_config.py ${tb_mbedtls_embed}
  DEPENDS ${tb_mbedtls_config} ${TB_AGENT_DIR}/tools/embed_config.py
  COMMENT "Embedding the mbed TLS config header (${tb_mbedtls_config})"
  VERBATIM)

tb_add_agent(NAME ${tb_mbedtls_agent}
  SOURCES ${TB_MBEDTLS_DIR}/common.c ${TB_MBEDTLS_DIR}/mbedtls.c ${TB_MBEDTLS_DIR}/mbedtls_shared.c
          ${TB_MBEDTLS_DIR}/mbedtls_crypto.c ${TB_MBEDTLS_DIR}/mbedtls_heap.c ${tb_mbedtls_config_c}
          ${TB_PRIMITIVES_COMMON} ${TB_PRIMITIVES_DIR}/mbedtls.c
  LIBS ${TB_MBEDTLS_LIBS}
  WRAP ${TB_MBEDTLS_WRAP}
  INCLUDES ${tb_mbedtls_includes}
  DEFINES ${tb_mbedtls_defines})

# Backend unit tests: the same objects and link flags as the agent.
set(TB_MBEDTLS_EXPECTED_SUITES 127 CACHE STRING
    "Suite count the mbedtls conformance test expects (127: Debian's 2.28 build; 0: any)")
tb_add_backend_tests(NAME mbedtls BACKEND tb_backend_${tb_mbedtls_agent}
  TESTS conformance primitives
  LIBS ${TB_MBEDTLS_LIBS}
  WRAP ${TB_MBEDTLS_WRAP}
  INCLUDES ${tb_mbedtls_includes} ${TB_PRIMITIVES_DIR}
  DEFINES ${tb_mbedtls_defines} TB_MBEDTLS_EXPECTED_SUITES=${TB_MBEDTLS_EXPECTED_SUITES})
