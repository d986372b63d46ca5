# Runs the node tests with tests/node/false_exceptions.txt and passes only when
# the run fails naming both false entries: a listed test that passes, and one
# that fails for another reason than the listed one.
#   cmake -DRUNNER=... -DDIR=... -DEXCEPTIONS=... -P expect_strict_failure.cmake
execute_process(
  COMMAND ${RUNNER} --backend vk --dir ${DIR} --exceptions ${EXCEPTIONS}
          --filter test_abs --filter test_cast_FLOAT_to_BFLOAT16
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the node-test run passed with false known exceptions")
endif()
foreach(expected "test_abs: listed as a known exception (\"anything at all\") but passes"
                 "test_cast_FLOAT_to_BFLOAT16: test_data_set_0 output 'output'")
  string(FIND "${out}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected '${expected}' in the output")
  endif()
endforeach()
