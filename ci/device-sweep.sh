#!/usr/bin/env bash
# On nvidia-h200-x2, in one device call, from the repository root with .stage carried
# (here: bash ci/device-stage.sh; for the page on the device also bash ci/report-wheels.sh):
#   1. the standard matrix (GEMM and layer jobs) on GPU 0 alone, then on GPUs 0 and 1 (one worker
#      each): every check must pass on both devices; the two wall times give the scaling figure;
#   2. the same selection as two shards (--shard 0/2 on GPU 0, 1/2 on GPU 1, at the same time),
#      merged with `moeval report merge`: the merged summary must equal the two-GPU run's;
#   3. `moeval sweep` of the quick matrix on both GPUs (every case on both, bitwise equal: exit 0);
#      the quick matrix under compute-sanitizer memcheck, racecheck and initcheck (0 errors each);
#   4. the HTML page of the two-GPU run and a headless-Chromium screenshot of it, when python3 with
#      the staged wheels (.stage/wheels) and chromium are there; otherwise render it here afterwards:
#      bash ci/report-html.sh <files_at>/standard-2gpu
# Everything goes to $OUT: the report directories, logs, sweep-summary.txt. Exit 0 only when all holds.
# MOEVAL_SWEEP_SKIP_SHARDS=1 / MOEVAL_SWEEP_SKIP_SANITIZER=1 leave step 2 / step 3 out (time budget).
set -uo pipefail
source ci/device-unpack.sh
moeval=build/tools/moeval/moeval
status=0
selection=(--matrix standard --filter 'kind!=golden' --require-gpu)
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "$out/devices.txt"
summary="$out/sweep-summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

# Wall seconds of one moeval check run; its log and report go to $out/<name>.
timed_check() {
  local name=$1; shift
  local start end rc
  start=$(date +%s.%N)
  "$moeval" check "${selection[@]}" --out "$out/$name" "$@" > "$out/$name.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  if ! command -v python3 >/dev/null; then
    say "$name: exit $rc, $(awk "BEGIN {print $end - $start}") s wall; $(grep '^check: [0-9]' "$out/$name.log" | tail -1)"
    return $rc
  fi
  python3 - "$out/$name/report.json" "$name" "$rc" "$start" "$end" <<'PY' | tee -a "$summary"
import json, sys
path, name, rc, start, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{name}: no report ({e}); exit {rc}")
    sys.exit(0)
s = r["summary"]
checks = len(r["checks"])
wall = end - start
print(f"{name}: exit {rc}, {wall:.1f} s wall, {checks} checks ({s['passed']} passed, {s['failed']} failed, "
      f"{s['skipped']} skipped, {s['not_run']} not run), {checks / wall:.2f} checks/s")
PY
  return $rc
}

timed_check standard-1gpu --device 0 || status=1
timed_check standard-2gpu --device 0,1 || status=1
if command -v python3 >/dev/null; then
python3 - "$out" <<'PY' | tee -a "$summary"
import json, sys
out = sys.argv[1]
def rate(name):
    r = json.load(open(f"{out}/{name}/report.json"))
    return len(r["checks"]) / r["run"]["duration_s"]
try:
    one, two = rate("standard-1gpu"), rate("standard-2gpu")
    print(f"scaling: 2 GPUs / 1 GPU = {two / one:.2f}x ({one:.2f} -> {two:.2f} checks/s; goal >= 1.8x)")
except Exception as e:
    print(f"scaling: not measured ({e})")
PY
else
  say "scaling: compute it from the two runs' report.json (no python3 here): checks / run.duration_s"
fi

# Two shards at once, one per GPU, then merged.
if [[ "${MOEVAL_SWEEP_SKIP_SHARDS:-0}" != 1 ]]; then
( "$moeval" check "${selection[@]}" --device 0 --shard 0/2 --out "$out/sharded" > "$out/shard0.log" 2>&1 ) &
( "$moeval" check "${selection[@]}" --device 1 --shard 1/2 --out "$out/sharded" > "$out/shard1.log" 2>&1 ) &
wait
"$moeval" report merge --out "$out/merged" "$out/sharded" 2>&1 | tee -a "$summary" || status=1
if ! command -v python3 >/dev/null; then
  say "merge: not compared with the two-GPU run (no python3 here); compare the fetched report.json files"
else
python3 - "$out" <<'PY' | tee -a "$summary" || status=1
import json, sys
out = sys.argv[1]
a = json.load(open(f"{out}/merged/report.json"))
b = json.load(open(f"{out}/standard-2gpu/report.json"))
# Cross-device jobs need two devices: each shard has one (SKIPPED there), the two-GPU run two.
status = lambda r: [c["status"] for c in r["checks"] if c["kind"] != "cross_device"]
same = [c["id"] for c in a["checks"]] == [c["id"] for c in b["checks"]] and status(a) == status(b) \
    and a["summary"]["failed"] == 0
print(f"merge: {'equals' if same else 'DIFFERS FROM'} the two-GPU run outside the cross-device jobs "
      f"({a['summary']} vs {b['summary']})")
sys.exit(0 if same else 1)
PY
fi
fi

# moeval sweep: the quick matrix with two seeds, every GEMM case on both GPUs, outputs bitwise equal.
start=$(date +%s)
"$moeval" sweep --matrix quick --device 0,1 --out "$out/sweep-quick" > "$out/sweep-quick.log" 2>&1
rc=$?
say "sweep (quick, 2 seeds, GPUs 0 and 1): exit $rc in $(( $(date +%s) - start )) s; $(grep '^sweep: [0-9]' "$out/sweep-quick.log" | tail -1)"
(( rc == 0 )) || status=1

# compute-sanitizer over the quick matrix's GPU jobs.
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
tools=(memcheck racecheck initcheck)
[[ "${MOEVAL_SWEEP_SKIP_SANITIZER:-0}" == 1 ]] && tools=()
for tool in "${tools[@]}"; do
  start=$(date +%s)
  "$sanitizer" --tool "$tool" --error-exitcode 99 "$moeval" check --matrix quick --filter 'kind!=golden' --require-gpu --device 0 \
      --out "$out/quick-$tool" > "$out/quick-$tool.log" 2>&1
  rc=$?
  say "quick matrix under $tool: exit $rc in $(( $(date +%s) - start )) s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/quick-$tool.log" | tail -1)"
  (( rc == 0 )) || status=1
done

# The page and its screenshot.
if [[ -d .stage/wheels ]] && command -v python3 >/dev/null && command -v chromium >/dev/null; then
  MOEVAL_REPORT_WHEELS=.stage/wheels bash ci/report-html.sh "$out/standard-2gpu" 2>&1 | tee -a "$summary" || status=1
  cp build/report-page/report.html build/report-page/report.png "$out/standard-2gpu/" 2>/dev/null
else
  say "page: not rendered here (needs .stage/wheels, python3 and chromium); render the fetched report with: bash ci/report-html.sh <files_at>/standard-2gpu"
fi
say "device sweep: $([[ $status == 0 ]] && echo PASSED || echo FAILED)"
exit $status
