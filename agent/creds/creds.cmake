# SPDX-License-Identifier: Apache-2.0
# Test credentials for every backend (library-neutral): generated at build time with the
# openssl CLI (gen_creds.sh; ML-DSA ones with an openssl >= 3.5 where the build has one), embedded as PEM text in a C source (embed_creds.py), built
# into the static library tb_credentials (tlsbench/credentials.h). Keys are never committed.
# Include once per build from any backend's .cmake; later includes reuse the target.
if(TARGET tb_credentials)
  return()
endif()

find_program(TB_OPENSSL openssl)
if(NOT TB_OPENSSL)
  message(FATAL_ERROR "the openssl command is needed to generate the test credentials "
                      "(Debian: apt-get install openssl)")
endif()

set(TB_CREDS_DIR ${CMAKE_CURRENT_BINARY_DIR}/creds)
set(TB_CREDS_STAMP ${TB_CREDS_DIR}/.generated)
set(TB_CREDS_C ${TB_GEN_DIR}/credentials_gen.c)

# ML-DSA credentials need an openssl command >= 3.5 (Debian 12's is 3.0): the cached
# openssl@3.5 build's when the agents are configured with it (cached_libraries.cmake, make
# agent). recipe.txt changes with that choice, so the keys are made again when it does.
set(TB_OPENSSL_PQ "")
if(TB_OPENSSL35_PREFIX AND EXISTS ${TB_OPENSSL35_PREFIX}/bin/openssl)
  set(TB_OPENSSL_PQ ${TB_OPENSSL35_PREFIX}/bin/openssl)
endif()
file(CONFIGURE OUTPUT ${TB_CREDS_DIR}/recipe.txt CONTENT "openssl_pq=${TB_OPENSSL_PQ}\n")

# Keys are regenerated only when the recipe changes, not on every build.
add_custom_command(
  OUTPUT ${TB_CREDS_STAMP}
  COMMAND ${CMAKE_COMMAND} -E env OPENSSL=${TB_OPENSSL} OPENSSL_PQ=${TB_OPENSSL_PQ}
          bash ${CMAKE_CURRENT_LIST_DIR}/gen_creds.sh ${TB_CREDS_DIR}
  COMMAND ${CMAKE_COMMAND} -E touch ${TB_CREDS_STAMP}
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/gen_creds.sh ${TB_CREDS_DIR}/recipe.txt
  COMMENT "Generating test credentials (CA + server + client per credential)"
  VERBATIM)
add_custom_command(
  OUTPUT ${TB_CREDS_C}
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/embed_creds.py ${TB_CREDS_DIR} ${TB_CREDS_C}
  DEPENDS ${TB_CREDS_STAMP} ${CMAKE_CURRENT_LIST_DIR}/embed_creds.py
  COMMENT "Embedding the test credentials into credentials_gen.c"
  VERBATIM)

add_library(tb_credentials STATIC ${TB_CREDS_C})
add_dependencies(tb_credentials tb_spec_gen)
target_include_directories(tb_credentials PUBLIC ${CMAKE_CURRENT_LIST_DIR}/../include ${TB_GEN_DIR})
target_compile_options(tb_credentials PRIVATE ${TB_WARNINGS})
