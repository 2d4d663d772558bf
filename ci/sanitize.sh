#!/usr/bin/env bash
# The cpu tier under AddressSanitizer + UndefinedBehaviorSanitizer (preset "asan" -> build-asan/):
# heap/stack/use-after-free errors, leaks and undefined behaviour in our host code fail the run.
# That includes the moeval CLI: the error catalogue (docs/errors.md) runs every documented bad
# command against the sanitized binary, so a memory error or a leak on an error path fails its row.
# Only cpu-tier targets are built; the kernels' sm_90 device code is PTX only (the sm_90a wgmma
# objects are still machine code, which the kernel resource budget checks; no device code runs
# here), their host code is sanitized like ours. ASAN_OPTIONS etc. are the test preset's (docs/fuzzing.md).
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
