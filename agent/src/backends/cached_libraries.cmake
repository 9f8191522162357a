# SPDX-License-Identifier: Apache-2.0
# Agents against the current library versions that `tlsbench libs build` compiles from
# Debian 13 sources into its cache (docs/libraries.md), next to the Debian 12 agents:
#
#   cmake -S agent -B build/agent -DTB_OPENSSL35_PREFIX=$(tlsbench libs path openssl@3.5)
#
# A prefix is a cache entry (include/ lib/ bin/ build.json); empty (the default) builds
# nothing here, so the Debian 12 agents are unaffected. tb_cached_library() reads an entry;
# the agents whose backend works with that version are added below (OpenSSL 3.5, wolfSSL
# 5.7, mbed TLS 3.6: its own backend).
set(TB_OPENSSL35_PREFIX "" CACHE PATH "openssl@3.5 build (tlsbench libs path openssl@3.5); empty: no agent")
set(TB_WOLFSSL57_PREFIX "" CACHE PATH "wolfssl@5.7 build (tlsbench libs path wolfssl@5.7); empty: no agent")
set(TB_MBEDTLS36_PREFIX "" CACHE PATH "mbedtls@3.6 build (tlsbench libs path mbedtls@3.6); empty: no agent")
set(TB_BACKENDS_DIR ${CMAKE_CURRENT_LIST_DIR})

# tb_cached_library(<prefix> <spec> <out libs> <out version>)
# The static archives of a complete cache entry in link order, then the system libraries
# they need, as build.json lists them; stops with the command to run when the entry is not
# a finished build of <spec>.
function(tb_cached_library prefix spec out_libs out_version)
  set(stamp ${prefix}/build.json)
  if(NOT EXISTS ${stamp})
    message(FATAL_ERROR "${prefix} is not a finished ${spec} build (no build.json): run "
                        "`tlsbench libs build ${spec}` and pass `tlsbench libs path ${spec}`")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${stamp})
  file(READ ${stamp} json)
  string(JSON built GET ${json} spec)
  if(NOT built STREQUAL spec)
    message(FATAL_ERROR "${prefix} holds ${built}, not ${spec}: pass `tlsbench libs path ${spec}`")
  endif()
  string(JSON version GET ${json} version)
  set(libs)
  foreach(list archives system_libs)
    string(JSON n LENGTH ${json} ${list})
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON item GET ${json} ${list} ${i})
      if(list STREQUAL "archives")
        set(item ${prefix}/lib/${item})
      endif()
      list(APPEND libs ${item})
    endforeach()
  endforeach()
  set(${out_libs} ${libs} PARENT_SCOPE)
  set(${out_version} ${version} PARENT_SCOPE)
endfunction()

# tb_wrap_symbols(<out> <backend>_wrap.h): the symbols of the X-macro list, for --wrap.
function(tb_wrap_symbols out header)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${header})
  file(STRINGS ${header} lines REGEX "^TB_WRAP\\(")
  set(symbols)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^TB_WRAP\\(([A-Za-z0-9_]+),.*$" "\\1" sym "${line}")
    list(APPEND symbols ${sym})
  endforeach()
  set(${out} ${symbols} PARENT_SCOPE)
endfunction()

if(TB_OPENSSL35_PREFIX OR TB_WOLFSSL57_PREFIX OR TB_MBEDTLS36_PREFIX)
  include(${TB_BACKENDS_DIR}/../../creds/creds.cmake)
  include(${TB_BACKENDS_DIR}/../primitives/primitives.cmake)
endif()

# OpenSSL 3.5: the OpenSSL 3 backend, whose 3.5 additions (ML-KEM groups, ML-DSA credentials,
# psk_ke) it finds in the library (docs/backend-openssl.md); creds.cmake embeds the ML-DSA
# test credentials when this prefix is set.
if(TB_OPENSSL35_PREFIX)
  tb_cached_library(${TB_OPENSSL35_PREFIX} openssl@3.5 tb_libs tb_version)
  tb_wrap_symbols(tb_wrap ${TB_BACKENDS_DIR}/openssl_wrap.h)
  message(STATUS "OpenSSL ${tb_version} from ${TB_OPENSSL35_PREFIX}: tlsbench-agent-openssl-3.5")
  tb_add_agent(NAME openssl-3.5
    SOURCES ${TB_BACKENDS_DIR}/common.c ${TB_BACKENDS_DIR}/openssl.c ${TB_BACKENDS_DIR}/openssl_crypto.c ${TB_BACKENDS_DIR}/openssl_heap.c
            ${TB_PRIMITIVES_COMMON} ${TB_PRIMITIVES_DIR}/openssl.c
    LIBS tb_credentials tb_primitives_kat ${tb_libs}
    WRAP ${tb_wrap}
    INCLUDES ${TB_OPENSSL35_PREFIX}/include)
  tb_add_backend_tests(NAME openssl-3.5 BACKEND tb_backend_openssl-3.5
    TESTS conformance primitives
    LIBS tb_credentials tb_primitives_kat ${tb_libs}
    WRAP ${tb_wrap}
    INCLUDES ${TB_BACKENDS_DIR} ${TB_OPENSSL35_PREFIX}/include ${TB_PRIMITIVES_DIR})
endif()

# mbed TLS 3.6: its own backend (mbedtls3.c), mbed TLS 3 being another API.
if(TB_MBEDTLS36_PREFIX)
  include(${TB_BACKENDS_DIR}/mbedtls3.cmake)
endif()

# wolfSSL 5.7: the wolfSSL backend with 5.7's wrapped prototypes (wolfssl_wrap_5_7.h: two
# changed, and the Kyber/ML-KEM calls), its Kyber groups and DTLS 1.3 (docs/backend-wolfssl.md).
if(TB_WOLFSSL57_PREFIX)
  tb_cached_library(${TB_WOLFSSL57_PREFIX} wolfssl@5.7 TB_WOLFSSL57_LIBS tb_version)
  tb_wrap_symbols(tb_wrap ${TB_BACKENDS_DIR}/wolfssl_wrap.h)
  tb_wrap_symbols(tb_wrap_version ${TB_BACKENDS_DIR}/wolfssl_wrap_5_7.h)
  list(APPEND tb_wrap ${tb_wrap_version})
  message(STATUS "wolfSSL ${tb_version} from ${TB_WOLFSSL57_PREFIX}: tlsbench-agent-wolfssl-5.7")
  tb_add_agent(NAME wolfssl-5.7
    SOURCES ${TB_BACKENDS_DIR}/common.c ${TB_BACKENDS_DIR}/wolfssl.c ${TB_BACKENDS_DIR}/wolfssl_crypto.c ${TB_BACKENDS_DIR}/wolfssl_heap.c
            ${TB_PRIMITIVES_COMMON} ${TB_PRIMITIVES_DIR}/wolfssl.c
    LIBS tb_credentials tb_primitives_kat ${TB_WOLFSSL57_LIBS}
    WRAP ${tb_wrap}
    INCLUDES ${TB_WOLFSSL57_PREFIX}/include)
  tb_add_backend_tests(NAME wolfssl-5.7 BACKEND tb_backend_wolfssl-5.7
    TESTS conformance trace primitives pace
    LIBS tb_credentials tb_primitives_kat ${TB_WOLFSSL57_LIBS}
    WRAP ${tb_wrap}
    INCLUDES ${TB_BACKENDS_DIR} ${TB_WOLFSSL57_PREFIX}/include ${TB_PRIMITIVES_DIR})
endif()

# Two agents over loopback sockets (tests/netpair.py), as agent/CMakeLists.txt runs the Debian
# 12 agents, with what the current versions add: post-quantum groups and ML-DSA with RESUME
# and MUTUAL_AUTH over TCP, DTLS 1.3 with a fragmented Kyber ClientHello over UDP, and across
# versions and libraries (OpenSSL 3.5 with 3.0, wolfSSL 5.7 resuming with OpenSSL 3.5).
if(BUILD_TESTING)
  set(tb_np Python3::Interpreter ${TB_AGENT_DIR}/tests/netpair.py --labels ${TB_SPEC_DIR}/labels.toml)
  foreach(lib openssl-3.5 wolfssl-5.7)
    if(TARGET tlsbench-agent-${lib})
      set(a $<TARGET_FILE:tlsbench-agent-${lib}>)
      add_test(NAME net_tcp_${lib} COMMAND ${tb_np} --server ${a} --client ${a} --transport tcp)
      add_test(NAME net_udp_cookies_${lib} COMMAND ${tb_np} --server ${a} --client ${a} --transport udp --cookies)
      add_test(NAME dtls_memory_${lib} COMMAND ${tb_np} --memory-dtls ${a})
    endif()
  endforeach()
  if(TARGET tlsbench-agent-openssl-3.5)
    set(a $<TARGET_FILE:tlsbench-agent-openssl-3.5>)
    add_test(NAME net_tcp_openssl-3.5_pq_resume_mutual
             COMMAND ${tb_np} --server ${a} --client ${a} --transport tcp --suite 0x1301
                     --extra=--group,X25519MLKEM768,--credential,mldsa44,--option,RESUME,--option,MUTUAL_AUTH)
    if(TARGET tlsbench-agent-openssl)
      add_test(NAME net_tcp_openssl-3.5_to_openssl
               COMMAND ${tb_np} --server $<TARGET_FILE:tlsbench-agent-openssl> --client ${a} --transport tcp
                       --suite 0x1301)
    endif()
  endif()
  if(TARGET tlsbench-agent-wolfssl-5.7)
    set(a $<TARGET_FILE:tlsbench-agent-wolfssl-5.7>)
    add_test(NAME net_udp_wolfssl-5.7_dtls13_kyber
             COMMAND ${tb_np} --server ${a} --client ${a} --transport udp --suite 0x1301 --cookies
                     --extra=--group,KYBER_LEVEL3)
    add_test(NAME net_tcp_wolfssl-5.7_resume_id_mutual
             COMMAND ${tb_np} --server ${a} --client ${a} --transport tcp --suite 0xC02B
                     --extra=--option,RESUME,--option,RESUME_ID,--option,MUTUAL_AUTH)
    if(TARGET tlsbench-agent-openssl-3.5)
      add_test(NAME net_tcp_wolfssl-5.7_to_openssl-3.5_resume
               COMMAND ${tb_np} --server $<TARGET_FILE:tlsbench-agent-openssl-3.5> --client ${a} --transport tcp
                       --suite 0x1301 --extra=--option,RESUME)
    endif()
  endif()
endif()
