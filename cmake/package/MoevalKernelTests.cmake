# moeval_add_kernel_tests(TARGET <name> KERNEL_FACTORY <callable> HEADER <header> [MATRIX <name>]
#                         [LABELS <labels...>] [SOURCES <files...>] [LIBS <targets...>])
#
# Builds a gtest executable <name> that runs a user's GemmKernelUnderTest over a named matrix of
# moeval::testbed::gemm_matrix, the GEMM problems of a name of the testbed's registry (default
# "smoke"; "default" is the GEMM core of `moeval check`'s standard matrix; quick, standard and full
# are the CLI's matrices: moeval/testbed/matrices.h), and
# adds one ctest entry per case (labelled `gpu` unless LABELS says otherwise). KERNEL_FACTORY is a
# callable (a function name) declared in HEADER that returns
# std::shared_ptr<const moeval::testbed::GemmKernelUnderTest>; SOURCES and LIBS hold the kernel.
# Without a CUDA device every case reports Skipped (never Passed); a case the kernel declares
# unsupported (unsupported_reason) is Skipped with the reason.
include_guard(GLOBAL)
include(GoogleTest)

function(moeval_add_kernel_tests)
  cmake_parse_arguments(ARG "" "TARGET;KERNEL_FACTORY;HEADER;MATRIX" "LABELS;SOURCES;LIBS" ${ARGN})
  foreach(required TARGET KERNEL_FACTORY HEADER)
    if(NOT ARG_${required})
      message(FATAL_ERROR "moeval_add_kernel_tests: ${required} is required "
                          "(TARGET <name> KERNEL_FACTORY <callable> HEADER <header> [MATRIX quick|standard|full|default|smoke])")
    endif()
  endforeach()
  if(NOT ARG_MATRIX)
    set(ARG_MATRIX smoke)
  endif()
  # The names of moeval::testbed::matrix_names() (a test compares the two lists).
  if(NOT ARG_MATRIX MATCHES "^(quick|standard|full|default|smoke)$")
    message(FATAL_ERROR "moeval_add_kernel_tests(${ARG_TARGET}): MATRIX '${ARG_MATRIX}' is unknown; "
                        "allowed: quick, standard, full, default, smoke")
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS gpu)
  endif()
  if(NOT TARGET GTest::gtest_main)
    find_package(GTest REQUIRED)
  endif()
  # The one generated line; file(CONFIGURE) rewrites it only when it changes.
  set(suite ${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET}_suite.cpp)
  file(CONFIGURE OUTPUT ${suite} CONTENT
       "#include \"${ARG_HEADER}\"\n#include \"moeval/testbed/kernel_test_suite.h\"\n\nMOEVAL_KERNEL_TEST_SUITE(${ARG_KERNEL_FACTORY}, \"${ARG_MATRIX}\")\n")
  add_executable(${ARG_TARGET} ${suite} ${ARG_SOURCES})
  target_link_libraries(${ARG_TARGET} PRIVATE ${ARG_LIBS} moeval::testbed GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${ARG_TARGET}
    TEST_PREFIX "${ARG_TARGET}."
    DISCOVERY_TIMEOUT 120
    NO_PRETTY_VALUES  # the test name already names the problem
    PROPERTIES LABELS "${ARG_LABELS}" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endfunction()
