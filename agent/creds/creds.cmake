# SPDX-License-Identifier: Apache-2.0
# Test credentials for every backend (library-neutral): the committed PEM files of
# agent/creds/fixed/ (made once by gen_creds.sh: `make creds`), embedded as PEM text in a C
# source (embed_creds.py), built into the static library tb_credentials
# (tlsbench/credentials.h). Fixed files, so two builds give byte-identical images and the same
# counts (docs/benchmarks.md "Reproducible images"); no openssl command is needed to build.
# Include once per build from any backend's .cmake; later includes reuse the target.
if(TARGET tb_credentials)
  return()
endif()

set(TB_CREDS_DIR ${CMAKE_CURRENT_LIST_DIR}/fixed)
set(TB_CREDS_C ${TB_GEN_DIR}/credentials_gen.c)

# The ML-DSA chains only where a backend can use them (the agents built with openssl@3.5:
# cached_libraries.cmake); a firmware image stays without their ~120 KB of PEM.
set(tb_creds_options "")
if(TB_OPENSSL35_PREFIX)
  set(tb_creds_options --ml-dsa)
endif()
# A file that changes with that choice, so the source is made again when it does.
file(CONFIGURE OUTPUT ${TB_GEN_DIR}/credentials_options.txt CONTENT "${tb_creds_options}\n")
file(GLOB_RECURSE tb_creds_files CONFIGURE_DEPENDS ${TB_CREDS_DIR}/*.crt ${TB_CREDS_DIR}/*.key ${TB_CREDS_DIR}/*.pub)
add_custom_command(
  OUTPUT ${TB_CREDS_C}
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/embed_creds.py ${tb_creds_options} ${TB_CREDS_DIR} ${TB_CREDS_C}
  DEPENDS ${tb_creds_files} ${TB_GEN_DIR}/credentials_options.txt ${CMAKE_CURRENT_LIST_DIR}/embed_creds.py
  COMMENT "Embedding the test credentials into credentials_gen.c"
  VERBATIM)

add_library(tb_credentials STATIC ${TB_CREDS_C})
add_dependencies(tb_credentials tb_spec_gen)
target_include_directories(tb_credentials PUBLIC ${CMAKE_CURRENT_LIST_DIR}/../include ${TB_GEN_DIR})
target_compile_options(tb_credentials PRIVATE ${TB_WARNINGS})
