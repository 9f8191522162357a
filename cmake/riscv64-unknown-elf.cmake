# SPDX-License-Identifier: Apache-2.0
# CMake toolchain file: Debian's riscv64-unknown-elf-gcc (gcc-riscv64-unknown-elf) with picolibc
# (picolibc-riscv64-unknown-elf) for a 32-bit RISC-V core, bare metal. The core is the target's
# (spec/targets.toml: cpu is the -march, float_abi the -mabi), given by the builders
# (tlsbench.builder.cross, .firmware), so the firmware and the TLS library cross-built for it
# agree on ISA and ABI:
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/riscv64-unknown-elf.cmake -DTB_CPU=rv32imac -DTB_FPU=none \
#         -DTB_FLOAT_ABI=ilp32 ...
# Why this compiler and not clang: Debian 12 ships it with picolibc built for every RV32
# multilib (rv32imac/ilp32 among them), so the C library matches the core; clang 14 has the
# riscv32 target but no C library for it. The same gcc 12 as the Arm toolchain, so code
# generation differs by the core, not the compiler. Pass extra C flags through CFLAGS (see
# cmake/arm-none-eabi.cmake: -DCMAKE_C_FLAGS would drop the core's flags).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_AR riscv64-unknown-elf-ar)
set(CMAKE_RANLIB riscv64-unknown-elf-ranlib)
set(CMAKE_SIZE riscv64-unknown-elf-size)
# No executable can run on the build machine: the compiler is tested with a static library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# The core, also in the compiler checks' own projects.
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TB_CPU TB_FPU TB_FLOAT_ABI)
foreach(v TB_CPU TB_FPU TB_FLOAT_ABI)
  if(NOT ${v})
    message(FATAL_ERROR "${v} is not set: give the target's core (spec/targets.toml), e.g. -DTB_CPU=rv32imac "
                        "-DTB_FPU=none -DTB_FLOAT_ABI=ilp32, or build with `make firmware`")
  endif()
endforeach()
if(NOT EXISTS /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs)
  message(FATAL_ERROR "picolibc is missing: apt-get install picolibc-riscv64-unknown-elf "
                      "(scripts/install-deps.sh installs it)")
endif()
set(TB_CPU_FLAGS "-march=${TB_CPU} -mabi=${TB_FLOAT_ABI}")
# picolibc's specs: its headers, its library for the -march/-mabi multilib; its crt0 and linker
# script are not used (-nostartfiles, the board's script). In the C flags only: CMake links with
# the C flags too, and the specs file refuses to be read twice.
# Sections per function and object, so --gc-sections drops what the image never calls.
set(CMAKE_C_FLAGS_INIT "${TB_CPU_FLAGS} --specs=picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${TB_CPU_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${TB_CPU_FLAGS} -nostartfiles -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
