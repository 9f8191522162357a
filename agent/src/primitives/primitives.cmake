# SPDX-License-Identifier: Apache-2.0
# What every backend's primitive experiments share (docs/primitives.md): common.c, compiled
# with the backend's src/primitives/<library>.c, and the known answers, computed at build
# time by tools/gen_kat.py with Python's hashlib and hmac (no TLS library) into the static
# library tb_primitives_kat. Include from a backend's .cmake, then add
# ${TB_PRIMITIVES_COMMON} and the library's file to its sources, tb_primitives_kat to its
# libraries and ${TB_PRIMITIVES_DIR} to its test includes.
set(TB_PRIMITIVES_DIR ${CMAKE_CURRENT_LIST_DIR})
set(TB_PRIMITIVES_COMMON ${CMAKE_CURRENT_LIST_DIR}/common.c)
if(TARGET tb_primitives_kat)
  return()
endif()

set(tb_primitives_kat_c ${TB_GEN_DIR}/primitives_kat_gen.c)
add_custom_command(
  OUTPUT ${tb_primitives_kat_c}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${TB_GEN_DIR}
  COMMAND Python3::Interpreter ${TB_AGENT_DIR}/tools/gen_kat.py ${tb_primitives_kat_c}
  DEPENDS ${TB_AGENT_DIR}/tools/gen_kat.py
  COMMENT "Generating the primitives' known answers (hashlib, hmac)"
  VERBATIM)
add_library(tb_primitives_kat STATIC ${tb_primitives_kat_c})
target_include_directories(tb_primitives_kat PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${TB_AGENT_DIR}/include)
target_compile_options(tb_primitives_kat PRIVATE ${TB_WARNINGS})
