# SPDX-License-Identifier: Apache-2.0
# The mbed TLS 3.6 backend: tlsbench-agent-mbedtls-3.6(-notrace), linked statically against
# a library cache entry (tlsbench libs path mbedtls@3.6; cached_libraries.cmake includes this
# file when TB_MBEDTLS36_PREFIX is set) so --wrap can trace its crypto operations
# (mbedtls3_wrap.h is the one list). A custom build (`python -m tlsbench.builder.custom_version`)
# points the prefix at its own library and sets the two variables below:
# tlsbench-agent-mbedtls-3.6-<name>.
set(TB_MBEDTLS3_DIR ${CMAKE_CURRENT_LIST_DIR})
set(TB_MBEDTLS36_BUILD_NAME "" CACHE STRING
    "Custom mbed TLS 3.6 build name: the agent becomes tlsbench-agent-mbedtls-3.6-<name> (empty: the cache's build)")
set(TB_MBEDTLS36_CONFIG_FILE "" CACHE FILEPATH
    "The config header the custom 3.6 library was built with; empty: the prefix's mbedtls/mbedtls_config.h")
set(TB_MBEDTLS36_EXPECTED_SUITES 170 CACHE STRING
    "Suite count the mbedtls3 conformance test expects (170: the library cache's 3.6 build; 0: any)")

tb_cached_library(${TB_MBEDTLS36_PREFIX} mbedtls@3.6 tb_mbed3_libs tb_mbed3_version)
file(READ ${TB_MBEDTLS36_PREFIX}/build.json tb_mbed3_json)
string(JSON tb_mbed3_debian GET ${tb_mbed3_json} debian_version)
string(JSON tb_mbed3_suite_name GET ${tb_mbed3_json} debian_suite)
set(tb_mbed3_source "Debian ${tb_mbed3_suite_name} mbedtls ${tb_mbed3_debian}")
tb_wrapped_symbols(${TB_MBEDTLS3_DIR}/mbedtls3_wrap.h tb_mbed3_wrap)
list(APPEND tb_mbed3_wrap calloc free) # the heap of a memory-collecting agent (mbedtls_heap.c)

# The config the library was built with, embedded for HELLO (name, SHA-256; the text for a
# custom build). The prefix's installed mbedtls_config.h is the one the library was compiled
# with (the cache and the custom builder copy it there), so the backend sees the same.
set(tb_mbed3_config_c ${TB_GEN_DIR}/mbedtls3_config_gen.c)
if(TB_MBEDTLS36_BUILD_NAME)
  set(tb_mbed3_agent mbedtls-3.6-${TB_MBEDTLS36_BUILD_NAME})
  set(tb_mbed3_config ${TB_MBEDTLS36_CONFIG_FILE})
  set(tb_mbed3_embed custom ${tb_mbed3_config} ${tb_mbed3_config_c} --text)
  set(TB_MBEDTLS36_EXPECTED_SUITES 0)
  if(NOT TB_MBEDTLS36_CONFIG_FILE)
    message(FATAL_ERROR "TB_MBEDTLS36_BUILD_NAME needs TB_MBEDTLS36_CONFIG_FILE (the custom config header)")
  endif()
else()
  set(tb_mbed3_agent mbedtls-3.6)
  set(tb_mbed3_config ${TB_MBEDTLS36_PREFIX}/include/mbedtls/mbedtls_config.h)
  set(tb_mbed3_embed library ${tb_mbed3_config} ${tb_mbed3_config_c})
endif()
add_custom_command(
  OUTPUT ${tb_mbed3_config_c}
  COMMAND Python3::Interpreter ${TB_AGENT_DIR}/tools/embed_config.py ${tb_mbed3_embed}
  DEPENDS ${tb_mbed3_config} ${TB_AGENT_DIR}/tools/embed_config.py
  COMMENT "Embedding the mbed TLS 3.6 config header (${tb_mbed3_config})"
  VERBATIM)

set(tb_mbed3_link tb_credentials ${tb_mbed3_libs})
set(tb_mbed3_includes ${TB_MBEDTLS36_PREFIX}/include ${TB_MBEDTLS3_DIR})
set(tb_mbed3_defines "TB_MBEDTLS3_SOURCE=\"${tb_mbed3_source}\"")
message(STATUS "mbed TLS ${tb_mbed3_version} (${tb_mbed3_source}) from ${TB_MBEDTLS36_PREFIX}: "
               "tlsbench-agent-${tb_mbed3_agent}")
tb_add_agent(NAME ${tb_mbed3_agent}
  SOURCES ${TB_MBEDTLS3_DIR}/common.c ${TB_MBEDTLS3_DIR}/mbedtls3.c ${TB_MBEDTLS3_DIR}/mbedtls_shared.c
          ${TB_MBEDTLS3_DIR}/mbedtls3_crypto.c ${TB_MBEDTLS3_DIR}/mbedtls_heap.c ${tb_mbed3_config_c}
  LIBS ${tb_mbed3_link}
  WRAP ${tb_mbed3_wrap}
  INCLUDES ${tb_mbed3_includes}
  DEFINES ${tb_mbed3_defines})

tb_add_backend_tests(NAME mbedtls3 BACKEND tb_backend_${tb_mbed3_agent}
  TESTS conformance
  LIBS ${tb_mbed3_link}
  WRAP ${tb_mbed3_wrap}
  INCLUDES ${tb_mbed3_includes}
  DEFINES ${tb_mbed3_defines} TB_MBEDTLS36_EXPECTED_SUITES=${TB_MBEDTLS36_EXPECTED_SUITES})
