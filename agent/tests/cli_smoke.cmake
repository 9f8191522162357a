# SPDX-License-Identifier: Apache-2.0
# ctest driver for the agent's command line: exit codes and key output of each subcommand.
# -DEXPERIMENT=<name> (an experiment agent) also runs that experiment and dumps its trace.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(expect rc_want pattern)
  execute_process(COMMAND ${AGENT} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY ${WORK})
  if(NOT rc EQUAL rc_want)
    message(FATAL_ERROR "${AGENT} ${ARGN}: exit ${rc}, expected ${rc_want}\n${out}\n${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "${AGENT} ${ARGN}: output does not match '${pattern}'\n${out}\n${err}")
  endif()
endfunction()

expect(0 "suites in" suites)
expect(0 "^{\"suites\":\\[" suites --json)
expect(2 "unknown command" frobnicate)
expect(2 "unknown option '--nope'" run --suite all --nope)
expect(2 "list them with '.*suites'" run --suite TLS-NO-SUCH-SUITE)
expect(2 "unknown suite" run --suite 0xFFFF)
expect(2 "--record must be 1 .. 16384" run --suite all --record 16385)
expect(2 "allowed: default, secp192r1, secp224r1, secp256r1" run --suite all --group p256)
expect(2 "allowed: auto, rsa2048" run --suite all --credential rsa1024)
expect(2 "expects a number" run --suite all --reps ten)
expect(2 "cannot read" dump ${WORK}/missing.bin)
expect(0 "experiments in" experiments)
expect(0 "^{\"experiments\":\\[" experiments --json)
expect(2 "usage: .* experiments \\[--json\\]" experiments --yaml)
expect(2 "unknown experiment 'no-such'" run --experiment no-such)
expect(2 "--group does not apply to --experiment runs" run --experiment no-such --group x25519)
expect(2 "--size needs --experiment NAME" run --suite all --size 64)
expect(2 "run needs --suite NAME\\|0xID\\|all or --experiment NAME" run --reps 2)
expect(0 "usage:" help)
# A real run with a frame file, a tree, and its dump.
expect(0 "OK .*median handshake CPU" run --suite all --out ${WORK}/all.bin)
execute_process(COMMAND ${AGENT} suites --json OUTPUT_VARIABLE suites_json)
string(REGEX MATCH "\"name\":\"([^\"]+)\",[^}]*\"credentials\":\\[\"" m "${suites_json}")
set(suite ${CMAKE_MATCH_1})
expect(0 "REPETITION.*HANDSHAKE.*PEER_TURN.*SEND.*RECORD_WRITE.*CLOSE" run --suite ${suite} --reps 3 --tree
       --out ${WORK}/one.bin)
expect(0 "REP config 0 index 2 status OK.*RECORD_READ" dump ${WORK}/one.bin)
file(WRITE ${WORK}/junk.bin "not a frame stream")
expect(3 "bad magic.*offset 0" dump ${WORK}/junk.bin)
# The posix marker: one "t_ns level" line per edge, a rising and a falling edge per shipped
# repetition; the warm-up repetition leaves it low.
execute_process(COMMAND ${CMAKE_COMMAND} -E env TLSBENCH_MARKER_FILE=${WORK}/marker.txt
                        ${AGENT} run --suite ${suite} --reps 2 --warmup 1 RESULT_VARIABLE rc OUTPUT_QUIET)
file(STRINGS ${WORK}/marker.txt edges)
list(LENGTH edges n_edges)
if(NOT rc EQUAL 0 OR NOT n_edges EQUAL 4 OR NOT edges MATCHES "^[0-9]+ 1;[0-9]+ 0;[0-9]+ 1;[0-9]+ 0$")
  message(FATAL_ERROR "marker file: exit ${rc}, ${n_edges} lines: ${edges}")
endif()

# An experiment: summary with group medians, the tree names its groups, and so does dump
# (the frame file carries the RUN frame); a size above the largest is refused (exit 1).
if(EXPERIMENT)
  expect(0 "OK .*${EXPERIMENT}.*median block CPU.*groups:" run --experiment ${EXPERIMENT} --reps 3)
  expect(0 "MEASURED_BLOCK.*USER_GROUP [a-z]" run --experiment ${EXPERIMENT} --reps 2 --tree
         --out ${WORK}/exp.bin)
  expect(0 "# RUN config 0: experiment ${EXPERIMENT}.*REP config 0 index 1 status OK.*USER_GROUP [a-z]"
         dump ${WORK}/exp.bin)
  expect(1 "UNSUPPORTED .*not in 1 \\.\\." run --experiment ${EXPERIMENT} --size 4000000000)
endif()
