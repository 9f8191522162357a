# SPDX-License-Identifier: Apache-2.0
# The device room stays portable: the sources a device build compiles (src/core/: TB_CORE_SOURCES)
# and the public headers include nothing but the C standard library and the agent's own
# headers. A posix header here would break the next port (a bare-metal board) silently.
# Run: cmake -DROOT=<agent dir> -DSOURCES="<files relative to ROOT>" -P portable_sources.cmake
cmake_policy(SET CMP0057 NEW) # if(IN_LIST)
set(tb_standard assert.h ctype.h errno.h float.h inttypes.h limits.h math.h stdarg.h stdbool.h
    stddef.h stdint.h stdio.h stdlib.h string.h)
file(GLOB tb_headers RELATIVE ${ROOT} ${ROOT}/include/tlsbench/*.h)
set(tb_bad)
foreach(f IN LISTS SOURCES tb_headers)
  file(STRINGS ${ROOT}/${f} tb_lines REGEX "^[ \t]*#[ \t]*include[ \t]*<")
  foreach(line IN LISTS tb_lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*<([^>]+)>.*$" "\\1" header "${line}")
    if(NOT header IN_LIST tb_standard)
      list(APPEND tb_bad "${f}: <${header}>")
    endif()
  endforeach()
endforeach()
if(tb_bad)
  string(REPLACE ";" "\n  " tb_bad "${tb_bad}")
  message(FATAL_ERROR "not portable (device sources may include only the C standard library):\n  ${tb_bad}\n"
                      "move the code to the posix port (src/posix/) or behind port.h")
endif()
message(STATUS "portable: every device source and public header includes only the C standard library")
