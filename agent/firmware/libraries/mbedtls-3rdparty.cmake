# SPDX-License-Identifier: Apache-2.0
# mbed TLS's 3rdparty/ (the p256-m PSA driver, Everest) in a device build of a source whose
# packaging took it out of the CMake build (Debian's cmake-disable-3rdparty.patch: Debian's
# library has no drivers). tlsbench.builder.cross passes this file as CMAKE_PROJECT_INCLUDE,
# which runs right after the top-level project(): before library/ looks for the p256m and
# everest targets. Their sources guard themselves, so a config without the driver or Everest
# compiles them to nothing; both archives are installed into lib/ and linked after mbedcrypto.
set(MBEDTLS_DIR ${CMAKE_CURRENT_SOURCE_DIR}) # what 3rdparty/*/CMakeLists.txt read (set later by the top level)
if(NOT TARGET p256m AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/3rdparty/CMakeLists.txt)
  add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/3rdparty ${CMAKE_BINARY_DIR}/3rdparty)
endif()
