# Third-party dependencies: Debian packages (ci/install-deps.sh installs them) and the CUDA toolkit.
# Imported targets are SYSTEM includes, so their headers do not trip our warning flags.

find_package(CUDAToolkit REQUIRED)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(GTest REQUIRED)
find_package(rapidcheck REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(Threads REQUIRED)

# Static HDF5 keeps the binaries self-contained for the device machine, which has no HDF5
# (docs/architecture.md, "Device runs build here, run there"): only libsz and libaec have to travel with them.
option(MOEVAL_HDF5_STATIC "Link HDF5 statically" ON)
set(HDF5_USE_STATIC_LIBRARIES ${MOEVAL_HDF5_STATIC})
find_package(HDF5 REQUIRED COMPONENTS C CXX)

add_library(moeval_hdf5 INTERFACE)
target_include_directories(moeval_hdf5 SYSTEM INTERFACE ${HDF5_INCLUDE_DIRS})
target_compile_definitions(moeval_hdf5 INTERFACE ${HDF5_DEFINITIONS})
target_link_libraries(moeval_hdf5 INTERFACE ${HDF5_CXX_LIBRARIES} ${HDF5_LIBRARIES})
if(MOEVAL_HDF5_STATIC)
  # FindHDF5 reports no link dependencies for the static archives.
  target_link_libraries(moeval_hdf5 INTERFACE sz aec z dl Threads::Threads)
endif()
