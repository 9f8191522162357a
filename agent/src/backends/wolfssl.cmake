# SPDX-License-Identifier: Apache-2.0
# The wolfSSL 5.x backend: tlsbench-agent-wolfssl(-notrace), linked statically against
# libwolfssl.a so --wrap can trace its crypto operations (wolfssl_wrap.h is the one list).
set(TB_WOLFSSL_DIR ${CMAKE_CURRENT_LIST_DIR})

find_path(TB_WOLFSSL_INCLUDE wolfssl/options.h)
find_library(TB_WOLFSSL_LIB NAMES libwolfssl.a)
if(NOT TB_WOLFSSL_INCLUDE OR NOT TB_WOLFSSL_LIB)
  message(STATUS "wolfSSL headers or static library not found: tlsbench-agent-wolfssl is not "
                 "built (Debian: apt-get install libwolfssl-dev)")
  return()
endif()
file(STRINGS ${TB_WOLFSSL_INCLUDE}/wolfssl/version.h tb_wolfssl_version
     REGEX "^#define LIBWOLFSSL_VERSION_STRING +\"")
if(NOT tb_wolfssl_version MATCHES "\"5\\.")
  message(STATUS "wolfSSL ${tb_wolfssl_version}: the backend needs 5.x; not built")
  return()
endif()

include(${TB_WOLFSSL_DIR}/../../creds/creds.cmake)
include(${TB_WOLFSSL_DIR}/../primitives/primitives.cmake)
find_package(Threads REQUIRED) # wolfSSL's mutexes and thread-local error queue
find_library(TB_LIBM m)         # the static library's math (the shared one links it itself)

tb_wrapped_symbols(${TB_WOLFSSL_DIR}/wolfssl_wrap.h TB_WOLFSSL_WRAP)
tb_wrapped_symbols(${TB_WOLFSSL_DIR}/wolfssl_wrap_5_5.h tb_wolfssl_wrap_version) # Debian 12: 5.5.4
list(APPEND TB_WOLFSSL_WRAP ${tb_wolfssl_wrap_version})

set(TB_WOLFSSL_LIBS tb_credentials tb_primitives_kat ${TB_WOLFSSL_LIB} Threads::Threads)
if(TB_LIBM)
  list(APPEND TB_WOLFSSL_LIBS ${TB_LIBM})
endif()

tb_add_agent(NAME wolfssl
  SOURCES ${TB_WOLFSSL_DIR}/common.c ${TB_WOLFSSL_DIR}/wolfssl.c ${TB_WOLFSSL_DIR}/wolfssl_crypto.c ${TB_WOLFSSL_DIR}/wolfssl_heap.c
          ${TB_PRIMITIVES_COMMON} ${TB_PRIMITIVES_DIR}/wolfssl.c
  LIBS ${TB_WOLFSSL_LIBS}
  WRAP ${TB_WOLFSSL_WRAP}
  INCLUDES ${TB_WOLFSSL_INCLUDE})

# Backend unit tests: the same objects and link flags as the agent.
set(TB_WOLFSSL_EXPECTED_SUITES 61 CACHE STRING
    "Suite count the wolfssl conformance test expects (61: Debian's 5.5.4 build, name aliases skipped; 0: any)")
tb_add_backend_tests(NAME wolfssl BACKEND tb_backend_wolfssl
  TESTS conformance trace primitives
  LIBS ${TB_WOLFSSL_LIBS}
  WRAP ${TB_WOLFSSL_WRAP}
  INCLUDES ${TB_WOLFSSL_DIR} ${TB_WOLFSSL_INCLUDE} ${TB_PRIMITIVES_DIR}
  DEFINES TB_WOLFSSL_EXPECTED_SUITES=${TB_WOLFSSL_EXPECTED_SUITES})
