#!/usr/bin/env bash
# On the device machine, from the repository root, with .stage/ carried (see ci/device-stage.sh):
# runs the gpu + multi_gpu + large + sanitize labels (MOEVAL_SKIP_LARGE=1 / MOEVAL_SKIP_SANITIZE=1
# leave one out), then the GPU mutants when MOEVAL_MUTANTS=1 (carry .mutants too) and the bench
# when MOEVAL_BENCH=1, writing logs, JUnit and JSON under $OUT, and
# prints a summary last. Fails when any test fails, and also when not a single GPU test ran (every
# one Skipped: no device, no driver), since a tier that ran nothing proved nothing.
set -uo pipefail
source ci/device-unpack.sh

nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "$out/devices.txt"
labels='gpu|multi_gpu'
[[ "${MOEVAL_SKIP_LARGE:-0}" == 1 ]] || labels="$labels|large"
[[ "${MOEVAL_SKIP_SANITIZE:-0}" == 1 ]] || labels="$labels|sanitize"
command -v compute-sanitizer > /dev/null || export PATH="$PATH:/usr/local/cuda/bin"
start=$(date +%s)
ctest --test-dir build -L "$labels" -j "${MOEVAL_JOBS:-4}" --output-on-failure --timeout 600 \
      --output-junit "$out/gpu-junit.xml" > "$out/gpu-tier.log" 2>&1
status=$?
echo "gpu tier ($labels): $(( $(date +%s) - start )) s, ctest exit $status"
# A tier in which every test was Skipped ran nothing: fail it (the JUnit counts tests and skips).
junit_count() { sed -n "s/^[[:space:]]*$1=\"\([0-9]*\)\".*/\1/p" "$out/gpu-junit.xml" 2>/dev/null | head -1; }
total=$(junit_count tests); skipped=$(junit_count skipped)
total=${total:-0}; skipped=${skipped:-0}
echo "gpu tier: $total tests, $skipped skipped"
if (( total == 0 || skipped >= total )); then
  echo "gpu tier: FAILED — no GPU test ran (all $total skipped); see $out/gpu-tier.log"
  status=1
fi
if [[ "${MOEVAL_MUTANTS:-0}" == 1 ]]; then
  # Optional: the GPU mutants of docs/testing.md (needs .mutants carried; ci/device-mutations.sh).
  bash ci/device-mutations.sh run 2>&1 | tee "$out/mutants.txt"
  (( PIPESTATUS[0] == 0 )) || status=1
fi
if [[ "${MOEVAL_BENCH:-0}" == 1 ]]; then
  build/tools/moeval/moeval bench --json "$out/bench.json" > "$out/bench.txt" 2>&1 || status=1
  cat "$out/bench.txt"
fi
echo "----- gpu tier summary -----"
grep -E "tests passed|tests failed|Failed|\*\*\*|Skipped|Label Time|^ *(gpu|multi_gpu|large|sanitize|cpu) *=" "$out/gpu-tier.log" | tail -60
exit $status
