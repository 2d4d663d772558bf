# Unity builds: each target's C++ files are compiled in batches, one translation unit per batch.
#
# Why: the host code's compile time is not header parsing but code generation of the same inline
# and template code in every file (rapidcheck generators and shrinkables, gtest's registration
# machinery, nlohmann::json, CLI11's option objects). A batch emits each of those once: four
# fixtures layout tests take 51 s of CPU one by one and 15 s as one batch (g++ 12, -O2 -g).
# CUDA files are never batched (CMake < 3.31 batches C and C++ only), so the kernels' objects and
# flags are exactly as before.
#
# Files of one target therefore share a translation unit: names local to a file (anonymous
# namespace, static) must be unique within their target, and a file must not rely on what an
# earlier file of its batch included. Configure with -DMOEVAL_UNITY_BUILD=OFF to compile every
# file on its own (e.g. to check that each file includes what it uses).
option(MOEVAL_UNITY_BUILD "Compile each target's C++ files in batches (unity build)" ON)
set(MOEVAL_UNITY_BUILD_BATCH_SIZE 8 CACHE STRING "C++ files per unity batch (0: the whole target in one)")

# Initialises the UNITY_BUILD property of every target created after this point.
set(CMAKE_UNITY_BUILD ${MOEVAL_UNITY_BUILD})
set(CMAKE_UNITY_BUILD_BATCH_SIZE ${MOEVAL_UNITY_BUILD_BATCH_SIZE})
