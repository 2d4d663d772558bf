# The sm_90a target, for the files that use Hopper's arch-specific instructions (the Marlin GEMM's
# wgmma path). CMake 3.25 cannot name 90a in CUDA_ARCHITECTURES, so such files go into an object
# library compiled with -gencode=arch=compute_90a,code=sm_90a and nothing else, linked into the
# library that dispatches to them, which gets MOEVAL_HAVE_WGMMA=1. Included by the main build
# (kernels/) and by the Python package's own CMake project (python/).

# Sets <out> to ON when sm_90 is among CMAKE_CUDA_ARCHITECTURES (the only GPU sm_90a code runs on).
function(moeval_builds_sm90 out)
  set(found OFF)
  foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(arch MATCHES "^90")
      set(found ON)
    endif()
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# moeval_add_sm90a_objects(<name> <into> SOURCES <.cu ...> [INCLUDES <dir ...>] [LIBS <target ...>])
function(moeval_add_sm90a_objects name into)
  cmake_parse_arguments(arg "" "" "SOURCES;INCLUDES;LIBS" ${ARGN})
  add_library(${name} OBJECT ${arg_SOURCES})
  target_include_directories(${name} PRIVATE ${arg_INCLUDES})
  if(arg_LIBS)
    target_link_libraries(${name} PRIVATE ${arg_LIBS})
  endif()
  # The launcher (cmake/ptxas-launcher.sh) records ptxas's resource report of every kernel for the
  # resource-budget test, and fails a compile in which ptxas serialized wgmma instructions (an info
  # line, not a warning: the object would build and run every MMA of the kernel one after the other).
  set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES OFF POSITION_INDEPENDENT_CODE ON
    CUDA_COMPILER_LAUNCHER "bash;${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ptxas-launcher.sh")
  target_compile_options(${name} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a>)
  target_sources(${into} PRIVATE $<TARGET_OBJECTS:${name}>)
  target_compile_definitions(${into} PRIVATE MOEVAL_HAVE_WGMMA=1)
endfunction()
