# SPDX-License-Identifier: Apache-2.0
# CMake toolchain file: Debian's arm-none-eabi-gcc (gcc-arm-none-eabi, libnewlib-arm-none-eabi)
# for a Cortex-M4 with FPU, bare metal. The firmware (agent/firmware) and the TLS library
# cross-built for it (tlsbench.builder.cross) both use it, so their objects agree on CPU and ABI.
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m4.cmake ...
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

set(TB_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
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
set(CMAKE_EXE_LINKER_FLAGS_INIT "${TB_CPU_FLAGS} -nostartfiles -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
