# Our own code builds clean with -Wall -Wextra; third-party headers come in as SYSTEM.
add_library(moeval_warnings INTERFACE)
target_compile_options(moeval_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-missing-field-initializers>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr -lineinfo>)
option(MOEVAL_WERROR "Treat warnings in moeval's own code as errors" OFF)
if(MOEVAL_WERROR)
  target_compile_options(moeval_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror> $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()
