# SPDX-License-Identifier: Apache-2.0
# What every C project of this repository sets (agent/, link/): C11 without extensions, a
# Release build unless asked otherwise, and warnings as errors (TB_WARNINGS, per target).
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()
set(CMAKE_C_STANDARD 11)
set(CMAKE_C_STANDARD_REQUIRED ON)
set(CMAKE_C_EXTENSIONS OFF)
set(CMAKE_C_FLAGS_RELEASE "-O2 -DNDEBUG")
set(TB_WARNINGS -Wall -Wextra -Werror)
