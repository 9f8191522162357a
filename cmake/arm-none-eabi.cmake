# SPDX-License-Identifier: Apache-2.0
# CMake toolchain file: Debian's arm-none-eabi-gcc (gcc-arm-none-eabi, libnewlib-arm-none-eabi)
# for an Arm Cortex-M (ARMv6-M to ARMv8.1-M), bare metal. The core is the target's (spec/targets.toml: cpu, fpu,
# float_abi), given by the builders (tlsbench.builder.cross, .firmware), so the firmware
# (agent/firmware) and the TLS library cross-built for it agree on CPU and ABI:
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi.cmake -DTB_CPU=cortex-m4 -DTB_FPU=fpv4-sp-d16 \
#         -DTB_FLOAT_ABI=hard ...
# Pass extra C flags through the CFLAGS environment variable: -DCMAKE_C_FLAGS=... would
# replace CMAKE_C_FLAGS_INIT below, and the library would silently be built for the default
# CPU (ARM mode, soft float); only the firmware's link would then fail.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar)
set(CMAKE_RANLIB arm-none-eabi-ranlib)
set(CMAKE_SIZE arm-none-eabi-size)
# No executable can run on the build machine: the compiler is tested with a static library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# The core, also in the compiler checks' own projects.
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TB_CPU TB_FPU TB_FLOAT_ABI)
foreach(v TB_CPU TB_FPU TB_FLOAT_ABI)
  if(NOT ${v})
    message(FATAL_ERROR "${v} is not set: give the target's core (spec/targets.toml), e.g. -DTB_CPU=cortex-m4 "
                        "-DTB_FPU=fpv4-sp-d16 -DTB_FLOAT_ABI=hard, or build with `make firmware`")
  endif()
endforeach()
set(TB_CPU_FLAGS "-mcpu=${TB_CPU} -mthumb -mfloat-abi=${TB_FLOAT_ABI}")
if(NOT TB_FPU STREQUAL "none")
  string(APPEND TB_CPU_FLAGS " -mfpu=${TB_FPU}")
endif()
# Debian's arm-none-eabi-gcc finds GCC's freestanding <stdint.h> before newlib's, and then
# newlib's <inttypes.h> defines no PRId64/PRIu64 (the agent's json.c uses them): newlib's
# headers first.
find_path(TB_NEWLIB_INCLUDE newlib.h PATHS /usr/include/newlib /usr/lib/arm-none-eabi/include
          NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
if(NOT TB_NEWLIB_INCLUDE)
  message(FATAL_ERROR "newlib's headers are missing: apt-get install libnewlib-arm-none-eabi "
                      "(scripts/install-deps.sh installs it)")
endif()
# Sections per function and object, so --gc-sections drops what the image never calls.
set(CMAKE_C_FLAGS_INIT "${TB_CPU_FLAGS} -isystem ${TB_NEWLIB_INCLUDE} -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${TB_CPU_FLAGS}")
# Full newlib (nosys.specs): newlib-nano's printf has no 64-bit conversions, which HELLO needs.
# Its start-up files are not used (-nostartfiles: the arch's reset code).
set(CMAKE_EXE_LINKER_FLAGS_INIT "${TB_CPU_FLAGS} --specs=nosys.specs -nostartfiles -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
