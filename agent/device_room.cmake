# SPDX-License-Identifier: Apache-2.0
# What the host build (agent/CMakeLists.txt) and a device's firmware build
# (agent/firmware/CMakeLists.txt) share, declared once: the core's sources (the device room),
# the generated spec headers and the reader of a backend's wrapped-symbol list.
# Needs TB_SPEC_DIR, TB_GEN_DIR and Python3::Interpreter (3.11: tomllib).
set(TB_AGENT_DIR ${CMAKE_CURRENT_LIST_DIR})

# What a device runs (docs/agent.md): the folder src/core/, portable C that includes nothing but
# the C standard library (the test device_sources_portable checks every file of it). The host
# build compiles it with the posix port (src/posix/), a firmware build with an arch
# (arch/<arch>/), a board (boards/<board>/) and its transport table (firmware/transports.c).
# experiments/none.c and no_primitives.c each define only an empty experiment table: as archive
# members they are linked only when no object of the agent defines the table (a backend's
# src/primitives/<library>.c, a user's experiment file), so every agent links either way.
file(GLOB_RECURSE TB_CORE_SOURCES CONFIGURE_DEPENDS RELATIVE ${TB_AGENT_DIR} ${TB_AGENT_DIR}/src/core/*.c)
list(TRANSFORM TB_CORE_SOURCES PREPEND ${TB_AGENT_DIR}/ OUTPUT_VARIABLE TB_CORE_SOURCE_PATHS)

# spec_gen.h (enumerations, labels, layout sizes and offsets, group families) and
# layout_gen.h (pack/unpack of the byte layouts), from spec/*.toml: target tb_spec_gen.
set(TB_SPEC_GEN ${TB_GEN_DIR}/tlsbench/spec_gen.h ${TB_GEN_DIR}/tlsbench/layout_gen.h)
add_custom_command(
  OUTPUT ${TB_SPEC_GEN}
  COMMAND Python3::Interpreter ${TB_AGENT_DIR}/tools/genspec.py header
          ${TB_SPEC_DIR}/labels.toml ${TB_SPEC_DIR}/protocol.toml ${TB_GEN_DIR}/tlsbench
  DEPENDS ${TB_SPEC_DIR}/labels.toml ${TB_SPEC_DIR}/protocol.toml ${TB_AGENT_DIR}/tools/genspec.py
  COMMENT "Generating tlsbench/spec_gen.h and layout_gen.h from spec/*.toml"
  VERBATIM)
add_custom_target(tb_spec_gen DEPENDS ${TB_SPEC_GEN})

# tb_wrapped_symbols(<lib>_wrap.h <out var>): the functions a backend wraps at link time,
# read from the X-macro list its <lib>_crypto.c expands (TB_WRAP(symbol, ...) and TB_WRAP_PSA(symbol, ...) lines).
function(tb_wrapped_symbols header out)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${header})
  file(STRINGS ${header} lines REGEX "^TB_WRAP(_PSA)?\\(")
  set(symbols)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^TB_WRAP(_PSA)?\\(([A-Za-z0-9_]+),.*$" "\\2" sym "${line}")
    list(APPEND symbols ${sym})
  endforeach()
  set(${out} ${symbols} PARENT_SCOPE)
endfunction()
