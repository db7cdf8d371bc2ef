# Tests of a foreign system's parts run by pytest with Debian's python3 (tests/epics, tests/tango):
#
#   weir_python_tests(PREFIX epics FOUND ${WEIR_EPICS_FOUND}
#       SKIP "no EPICS base in this build (...)"
#       ENVIRONMENT "WEIR_EPICS_PROGRAM=$<TARGET_FILE:weir_epics>;..."
#       TESTS "name|pytest node|timeout (s)|labels (comma-separated)" ...)
#
# declares PREFIX.name for each, run in the calling folder with WEIR_CLI, WEIR_BUILD_DIR and
# ENVIRONMENT set; without FOUND each is reported skipped (exit 77) with the reason.
include_guard(GLOBAL)

function(weir_python_tests)
  cmake_parse_arguments(arg "" "PREFIX;FOUND;SKIP" "ENVIRONMENT;TESTS" ${ARGN})
  find_program(WEIR_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
  foreach(entry IN LISTS arg_TESTS)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 name)
    list(GET fields 1 node)
    list(GET fields 2 timeout)
    list(GET fields 3 labels)
    string(REPLACE "," ";" labels "${labels}")
    set(test ${arg_PREFIX}.${name})
    if(arg_FOUND)
      add_test(NAME ${test}
               COMMAND ${WEIR_PYTHON} -m pytest -q -s -rs -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/${node})
      set_tests_properties(${test} PROPERTIES
          ENVIRONMENT "WEIR_CLI=$<TARGET_FILE:weir>;${arg_ENVIRONMENT};WEIR_BUILD_DIR=${CMAKE_BINARY_DIR};PYTHONDONTWRITEBYTECODE=1")
    else()
      add_test(NAME ${test} COMMAND sh -c "echo 'SKIPPED: ${arg_SKIP}'; exit 77")
    endif()
    set_tests_properties(${test} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout} SKIP_RETURN_CODE 77)
  endforeach()
endfunction()
