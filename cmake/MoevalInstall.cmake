# `cmake --install` exports moeval's libraries as a CMake package, so a kernel written elsewhere is
# checked without a fork:
#   find_package(moeval REQUIRED)
#   moeval_add_kernel_tests(TARGET my_tests KERNEL_FACTORY my::make_kernel HEADER my_kernel.h MATRIX smoke
#                           LIBS my_kernel)
# Targets: moeval::fixtures, moeval::reference_cpu, moeval::tolerance, moeval::kernels,
# moeval::reference_cublas, moeval::testbed. Included by the top-level CMakeLists.txt after every
# folder has defined its target.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MOEVAL_EXPORTED_LIBRARIES fixtures reference_cpu tolerance kernels reference_cublas testbed)
set(MOEVAL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/moeval)

foreach(name IN LISTS MOEVAL_EXPORTED_LIBRARIES)
  set(target moeval_${name})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  # Same spelling inside this tree as for a consumer of the installed package.
  add_library(moeval::${name} ALIAS ${target})
  # Each folder declares its public headers as <folder>/include (a source path); the installed
  # targets find them under the prefix's include/ instead.
  get_target_property(source_includes ${target} INTERFACE_INCLUDE_DIRECTORIES)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "$<BUILD_INTERFACE:${source_includes}>")
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  foreach(dir IN LISTS source_includes)
    install(DIRECTORY ${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT moeval_dev)
  endforeach()
endforeach()

# moeval_warnings is linked privately by every library; a static library's private link items are
# part of its export (as $<LINK_ONLY:...>), so it travels too. It carries no compile options to
# consumers: LINK_ONLY passes nothing but linking.
install(TARGETS moeval_warnings moeval_fixtures moeval_reference_cpu moeval_tolerance moeval_kernels
                moeval_reference_cublas moeval_testbed
        EXPORT moevalTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT moeval_dev)
install(EXPORT moevalTargets NAMESPACE moeval:: DESTINATION ${MOEVAL_INSTALL_CMAKEDIR} COMPONENT moeval_dev)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/package/moevalConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/moevalConfig.cmake INSTALL_DESTINATION ${MOEVAL_INSTALL_CMAKEDIR})
# 0.x: only the same minor version promises the same interfaces.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/moevalConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/moevalConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/moevalConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/package/MoevalKernelTests.cmake
        DESTINATION ${MOEVAL_INSTALL_CMAKEDIR} COMPONENT moeval_dev)
