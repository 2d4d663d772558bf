#!/usr/bin/env bash
# On the device machine (any GPU count; two or more for the cross-device jobs and the scaling
# figure), in one device call, from the repository root with .stage carried (here: bash
# ci/device-stage.sh; for the page on the device also bash ci/report-wheels.sh):
#   1. the standard matrix (GEMM and layer jobs) on GPU 0 alone, then on 2, 4, ... GPUs up to all of
#      them (one worker each): every check must pass; the wall times give the scaling figures;
#   2. the same selection as S shards at once (shard s on GPU s mod the GPU count), merged with
#      `moeval report merge`: the merged summary must equal the all-GPU run's (S: MOEVAL_SWEEP_SHARDS,
#      a comma-separated list, default the GPU count and at least 2 — several shards share a GPU
#      where S exceeds it, which exercises the shard and merge path of a larger fleet);
#   3. `moeval sweep` of the quick matrix on every GPU (every case on each, bitwise equal: exit 0);
#      the quick matrix under compute-sanitizer memcheck, racecheck and initcheck (0 errors each);
#   4. the HTML page of the all-GPU run and a headless-Chromium screenshot of it, when python3 with
#      the staged wheels (.stage/wheels) and chromium are there; otherwise render it here afterwards:
#      bash ci/report-html.sh <files_at>/standard-<N>gpu
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

# The standard matrix on 1, 2, 4, ... GPUs (powers of two up to the count here, and the count).
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
(( gpus >= 1 )) || { say "no GPU visible"; exit 1; }
counts=()
for ((c = 1; c < gpus; c *= 2)); do counts+=("$c"); done
counts+=("$gpus")
devices() { local list=0 d; for ((d = 1; d < $1; ++d)); do list+=",$d"; done; echo "$list"; }
for c in "${counts[@]}"; do timed_check "standard-${c}gpu" --device "$(devices "$c")" || status=1; done
all="standard-${gpus}gpu"
if command -v python3 >/dev/null; then
python3 - "$out" "${counts[@]}" <<'PY' | tee -a "$summary"
import json, sys
out, counts = sys.argv[1], [int(c) for c in sys.argv[2:]]
def rate(c):
    r = json.load(open(f"{out}/standard-{c}gpu/report.json"))
    return len(r["checks"]) / r["run"]["duration_s"]
try:
    one = rate(1)
    for c in counts[1:]:
        r = rate(c)
        print(f"scaling: {c} GPUs / 1 GPU = {r / one:.2f}x ({one:.2f} -> {r:.2f} checks/s; "
              f"ideal {c}x, goal >= {0.9 * c:.1f}x)")
    if len(counts) == 1:
        print(f"scaling: one GPU here ({one:.2f} checks/s); no scaling figure")
except Exception as e:
    print(f"scaling: not measured ({e})")
PY
else
  say "scaling: compute it from the runs' report.json (no python3 here): checks / run.duration_s"
fi

# The same selection as S shards at once (shard s on GPU s mod the GPU count; MOEVAL_SWEEP_SHARDS:
# a comma-separated list of S, default the GPU count, at least 2), each set merged with `moeval
# report merge` and compared with the all-GPU run: same checks, same statuses outside the
# cross-device jobs (a shard on one GPU skips them), none failed.
if [[ "${MOEVAL_SWEEP_SKIP_SHARDS:-0}" != 1 ]]; then
IFS=',' read -r -a shard_counts <<< "${MOEVAL_SWEEP_SHARDS:-$(( gpus > 2 ? gpus : 2 ))}"
for shards in "${shard_counts[@]}"; do
  start=$(date +%s.%N)
  for ((s = 0; s < shards; ++s)); do
    ( "$moeval" check "${selection[@]}" --device $(( s % gpus )) --shard "$s/$shards" --out "$out/sharded-$shards" \
        > "$out/shard-$s-of-$shards.log" 2>&1 ) &
  done
  wait
  say "$shards shards on $gpus GPU(s): $(awk "BEGIN {printf \"%.1f\", $(date +%s.%N) - $start}") s wall"
  "$moeval" report merge --out "$out/merged-$shards" "$out/sharded-$shards" 2>&1 | tee -a "$summary" || status=1
  if ! command -v python3 >/dev/null; then
    say "merge: not compared with the all-GPU run (no python3 here); compare the fetched report.json files"
    continue
  fi
  python3 - "$out" "$shards" "$all" <<'PY' | tee -a "$summary" || status=1
import json, sys
out, shards, all_name = sys.argv[1], sys.argv[2], sys.argv[3]
a = json.load(open(f"{out}/merged-{shards}/report.json"))
b = json.load(open(f"{out}/{all_name}/report.json"))
status = lambda r: [c["status"] for c in r["checks"] if c["kind"] != "cross_device"]
same = [c["id"] for c in a["checks"]] == [c["id"] for c in b["checks"]] and status(a) == status(b) \
    and a["summary"]["failed"] == 0
print(f"merge of {shards} shards: {'equals' if same else 'DIFFERS FROM'} the {all_name} run outside the "
      f"cross-device jobs ({a['summary']} vs {b['summary']})")
sys.exit(0 if same else 1)
PY
done
fi

# moeval sweep: the quick matrix with two seeds, every GEMM case on every GPU, outputs bitwise equal.
start=$(date +%s)
"$moeval" sweep --matrix quick --device "$(devices "$gpus")" --out "$out/sweep-quick" > "$out/sweep-quick.log" 2>&1
rc=$?
say "sweep (quick, 2 seeds, GPUs $(devices "$gpus")): exit $rc in $(( $(date +%s) - start )) s; $(grep '^sweep: [0-9]' "$out/sweep-quick.log" | tail -1)"
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
  MOEVAL_REPORT_WHEELS=.stage/wheels bash ci/report-html.sh "$out/$all" 2>&1 | tee -a "$summary" || status=1
  cp build/report-page/report.html build/report-page/report.png "$out/$all/" 2>/dev/null
else
  say "page: not rendered here (needs .stage/wheels, python3 and chromium); render the fetched report with: bash ci/report-html.sh <files_at>/$all"
fi
say "device sweep: $([[ $status == 0 ]] && echo PASSED || echo FAILED)"
exit $status
