#!/usr/bin/env bash
# The cpu tier under AddressSanitizer + UndefinedBehaviorSanitizer (preset "asan" -> build-asan/):
# heap/stack/use-after-free errors, leaks and undefined behaviour in our host code fail the run.
# Only cpu-tier targets are built; CUDA kernels are compiled to PTX only (no device code runs here).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
start=$(date +%s)
if [[ ! -f build-asan/build.ninja ]]; then
  cmake --preset asan >/dev/null
fi
cmake --build --preset asan -j "${MOEVAL_JOBS:-$(nproc)}"
built=$(date +%s)
echo "sanitize: build $(( built - start )) s"
ctest --preset asan -j "${MOEVAL_JOBS:-$(nproc)}"
echo "sanitize: cpu tier under ASan+UBSan $(( $(date +%s) - built )) s"
