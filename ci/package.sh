#!/usr/bin/env bash
# moeval as a package, on a machine without a GPU (after ci/test.sh built the tree):
#   1. `cmake --install` into a prefix, then configure, build and ctest examples/consumer against it
#      (find_package(moeval), moeval_add_kernel_tests; its GPU cases report Skipped);
#   2. the Python package: `pip install .` (CPU-only build) in a venv, then its pytest suite, whose
#      output must hold no nanobind leak report.
# Prints the seconds each part took.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
jobs="${MOEVAL_JOBS:-$(nproc)}"

start=$(date +%s)
prefix="$PWD/build/package-prefix"
rm -rf "$prefix" build/package-consumer
cmake --install build --prefix "$prefix" >/dev/null
cmake -S examples/consumer -B build/package-consumer -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build build/package-consumer -j "$jobs"
ctest --test-dir build/package-consumer --output-on-failure -j "$jobs"
echo "package: install + example consumer: $(( $(date +%s) - start )) s"

start=$(date +%s)
venv="$PWD/build/package-venv"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
CMAKE_BUILD_PARALLEL_LEVEL="$jobs" "$venv/bin/python" -m pip install -q ".[test]"
echo "package: pip install . (CPU build): $(( $(date +%s) - start )) s"
start=$(date +%s)
"$venv/bin/python" -m pytest -q 2>&1 | tee build/package-pytest.log  # pipefail: pytest's status
bash ci/nanobind-leaks.sh build/package-pytest.log
echo "package: pytest: $(( $(date +%s) - start )) s"
