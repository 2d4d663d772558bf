#!/usr/bin/env bash
# On nvidia-h200-x2 (or one H200), in one device call, from the repository root with .stage carried
# (here first: bash ci/device-stage.sh):
#   1. moeval_gpu_reference_tests: the GPU reference (dequantize + cuBLAS, S from the squared
#      operands on the GPU) agrees with the CPU's fp64 reference on small cases, a correct kernel
#      passes against it and a wrong output is still caught;
#   2. the full matrix's real-size cases judged by it (`--filter reference=gpu-cublas`), by default
#      those of Qwen3-30B-A3B and Mixtral-8x7B at 4096 tokens, every expert local
#      (MOEVAL_REAL_SIZE_FILTER replaces the second filter; fixtures build a case's weights on one
#      host core, ~1e7 weights/s: a Mixtral case ~1.5 min, a DeepSeek-V3 case (7.5e9 weights) far
#      more than one device call): every check must PASS, with "reference": "gpu-cublas". The run
#      is stopped by SIGINT after MOEVAL_REAL_SIZE_SECONDS (default 500) and still writes its report.
# Everything goes to $OUT (real-size/ report directory, logs, real-size-summary.txt). Exit 0 only
# when all holds.
set -uo pipefail
source ci/device-unpack.sh
moeval=build/tools/moeval/moeval
status=0
summary="$out/real-size-summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader | tee "$out/devices.txt"
devices=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)

ctest --test-dir build -R '^moeval_gpu_reference_tests\.' --output-on-failure > "$out/gpu-reference-tests.log" 2>&1 || status=1
say "gpu reference tests: $(grep -E 'tests passed|tests failed' "$out/gpu-reference-tests.log" | tail -1)"
grep -E 'Skipped|Failed' "$out/gpu-reference-tests.log" | tee -a "$summary"
if grep -q 'Skipped' "$out/gpu-reference-tests.log"; then status=1; fi  # on the device nothing may skip

selection=${MOEVAL_REAL_SIZE_FILTER:-shape=qwen3-30b-a3b-all-experts|mixtral-8x7b-all-experts,M=4096}
start=$(date +%s)
timeout -s INT "${MOEVAL_REAL_SIZE_SECONDS:-500}" \
  "$moeval" check --matrix full --filter reference=gpu-cublas --filter "$selection" --require-gpu --device "$devices" \
    --out "$out/real-size" > "$out/real-size.log" 2>&1 || status=1
say "real-size check ($selection) on devices $devices: $(( $(date +%s) - start )) s; $(grep '^check: [0-9]' "$out/real-size.log" | tail -1)"
if command -v python3 >/dev/null; then
python3 - "$out/real-size/report.json" <<'PY' | tee -a "$summary" || status=1
import json, sys
r = json.load(open(sys.argv[1]))
bad = 0
for c in r["checks"]:
    ok = c["status"] == "PASS" and c["reference"] == "gpu-cublas"
    bad += not ok
    ratio = "-" if c["max_ratio"] is None else f"{c['max_ratio']:.3f}"
    print(f"{c['status']:8} {c['reference']:10} ratio {ratio:>6} {c['time_s']:7.1f} s  {c['id']}")
not_run = r["summary"]["not_run"]
print(f"real-size: {len(r['checks'])} checks, {bad} not PASS by gpu-cublas, {not_run} not run (time limit)")
sys.exit(1 if bad or not_run or not r["checks"] else 0)
PY
fi
say "real-size check: $([[ $status == 0 ]] && echo PASSED || echo FAILED)"
exit $status
