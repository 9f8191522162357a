# SPDX-License-Identifier: Apache-2.0
# The OpenSSL 3 backend: tlsbench-agent-openssl(-notrace), linked statically against libssl.a
# and libcrypto.a so --wrap can trace its crypto operations (openssl_wrap.h is the one list).
set(TB_OPENSSL_DIR ${CMAKE_CURRENT_LIST_DIR})

find_path(TB_OPENSSL_INCLUDE openssl/ssl.h)
find_library(TB_OPENSSL_SSL_LIB NAMES libssl.a)
find_library(TB_OPENSSL_CRYPTO_LIB NAMES libcrypto.a)
if(NOT TB_OPENSSL_INCLUDE OR NOT TB_OPENSSL_SSL_LIB OR NOT TB_OPENSSL_CRYPTO_LIB)
  message(STATUS "OpenSSL headers or static libraries not found: tlsbench-agent-openssl is not "
                 "built (Debian: apt-get install libssl-dev)")
  return()
endif()
file(STRINGS ${TB_OPENSSL_INCLUDE}/openssl/opensslv.h tb_openssl_major
     REGEX "^# *define OPENSSL_VERSION_MAJOR +[0-9]+")
if(NOT tb_openssl_major MATCHES "OPENSSL_VERSION_MAJOR +3$")
  message(STATUS "OpenSSL ${tb_openssl_major}: the backend needs 3.x; not built")
  return()
endif()

include(${TB_OPENSSL_DIR}/../../creds/creds.cmake)
include(${TB_OPENSSL_DIR}/../primitives/primitives.cmake)
find_package(Threads REQUIRED)

tb_wrapped_symbols(${TB_OPENSSL_DIR}/openssl_wrap.h TB_OPENSSL_WRAP)

# Order matters for static archives: ssl needs crypto; crypto needs dlopen and threads.
set(TB_OPENSSL_LIBS tb_credentials tb_primitives_kat ${TB_OPENSSL_SSL_LIB} ${TB_OPENSSL_CRYPTO_LIB} ${CMAKE_DL_LIBS} Threads::Threads)

tb_add_agent(NAME openssl
  SOURCES ${TB_OPENSSL_DIR}/common.c ${TB_OPENSSL_DIR}/openssl.c ${TB_OPENSSL_DIR}/openssl_crypto.c ${TB_OPENSSL_DIR}/openssl_heap.c
          ${TB_PRIMITIVES_COMMON} ${TB_PRIMITIVES_DIR}/openssl.c
  LIBS ${TB_OPENSSL_LIBS}
  WRAP ${TB_OPENSSL_WRAP}
  INCLUDES ${TB_OPENSSL_INCLUDE})

# Backend unit tests: the same objects and link flags as the agent.
set(TB_OPENSSL_EXPECTED_SUITES 0 CACHE STRING
    "Suite count the openssl conformance test expects (0: whatever the linked build lists)")
tb_add_backend_tests(NAME openssl BACKEND tb_backend_openssl
  TESTS conformance primitives
  LIBS ${TB_OPENSSL_LIBS}
  WRAP ${TB_OPENSSL_WRAP}
  INCLUDES ${TB_OPENSSL_DIR} ${TB_OPENSSL_INCLUDE} ${TB_PRIMITIVES_DIR}
  DEFINES TB_OPENSSL_EXPECTED_SUITES=${TB_OPENSSL_EXPECTED_SUITES})
