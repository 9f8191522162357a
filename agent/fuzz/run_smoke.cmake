# SPDX-License-Identifier: Apache-2.0
# ctest driver: a short libFuzzer run over a copy of the seed corpus.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus)
file(GLOB seeds ${SEEDS}/*)
file(COPY ${seeds} DESTINATION ${WORK}/corpus)
execute_process(
  COMMAND ${FUZZER} -max_total_time=20 -runs=2000000 -max_len=4096 -print_final_stats=1
          ${WORK}/corpus
  WORKING_DIRECTORY ${WORK}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzz_frame found a crash (exit ${rc}); the reproducer is in ${WORK}")
endif()
