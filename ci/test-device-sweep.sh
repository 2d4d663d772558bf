#!/usr/bin/env bash
# CI check of ci/device-sweep.sh without a GPU, on 1, 2, 4, 6 and 8 stand-in GPUs. The 4- and 8-GPU
# kinds that the sweep is for have never been lent, so this is the only run its multi-GPU paths get
# before the device call that needs them to work the first time.
#
# In a scratch copy, stand-ins go first on PATH: nvidia-smi lists N GPUs (FAKE_GPUS), and
# compute-sanitizer runs its command and reports 0 errors. The staged CLI is a stand-in that logs
# each call's devices and shard, then runs the real CLI (build/tools/moeval/moeval, built by
# ci/test.sh before this runs) with --cpu-only in place of --require-gpu: every report, shard and
# merge is the real CLI's (481 standard-matrix checks, all Skipped), so a change of the report's
# fields or of `report merge` breaks this check as it would break the device call. Only the wall
# time of a check run is modelled (run.duration_s = 12 s / N + 0.5 s), so the scaling lines have
# known values. Checks: the device lists of each run, which GPU each shard ran on, the scaling
# lines, each merge's verdict, the quick sweep over every GPU, the three sanitizer runs, and that a
# shard that fails makes the whole call fail.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
real=$root/build/tools/moeval/moeval
[[ -x $real ]] || { echo "test-device-sweep: $real is not built (run bash ci/build.sh first)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "test-device-sweep: FAILED: $*" >&2; exit 1; }

mkdir -p "$work/repo/ci" "$work/bin"
cp ci/device-sweep.sh ci/device-unpack.sh "$work/repo/ci/"
cat > "$work/bin/nvidia-smi" <<'SH'
#!/usr/bin/env bash
for ((i = 0; i < FAKE_GPUS; ++i)); do
  if [[ "$*" == *--query-gpu* ]]; then echo "$i, NVIDIA H200 (stand-in), 143771 MiB, 0.0"; else echo "GPU $i: NVIDIA H200 (UUID: GPU-stand-in-$i)"; fi
done
SH
cat > "$work/bin/compute-sanitizer" <<'SH'
#!/usr/bin/env bash
[[ $1 == --tool && $3 == --error-exitcode ]] || { echo "compute-sanitizer stand-in: unexpected arguments $*" >&2; exit 2; }
echo "sanitizer $2" >> "$FAKE_LOG"
"${@:5}" || exit
echo "========= ERROR SUMMARY: 0 errors"
SH
cat > "$work/moeval" <<'SH'
#!/usr/bin/env bash
# The staged CLI's stand-in: logs the call, then the real CLI without a GPU.
case $1 in
  check)
    shift
    args=(check) devices=all shard=none out=
    while (( $# )); do
      case $1 in
        --require-gpu) args+=(--cpu-only) ;;
        --device) devices=$2; shift ;;
        --shard) shard=$2; args+=("$1" "$2"); shift ;;
        --out) out=$2; args+=("$1" "$2"); shift ;;
        *) args+=("$1") ;;
      esac
      shift
    done
    echo "check devices=$devices shard=$shard" >> "$FAKE_LOG"
    if [[ -n "${FAKE_FAIL_SHARD:-}" && $shard == "$FAKE_FAIL_SHARD/"* ]]; then echo "stand-in: shard $shard fails"; exit 1; fi
    "$FAKE_REAL" "${args[@]}" || exit
    if [[ $shard == none && -n $out ]]; then
      python3 - "$out/report.json" "$devices" <<'PY'
import json, sys
path, devices = sys.argv[1], sys.argv[2].split(',')
r = json.load(open(path))
r['run']['duration_s'] = 12.0 / len(devices) + 0.5
json.dump(r, open(path, 'w'))
PY
    fi
    ;;
  sweep)
    devices=none
    for ((i = 2; i <= $#; ++i)); do [[ ${!i} == --device ]] && { j=$((i + 1)); devices=${!j}; }; done
    echo "sweep devices=$devices" >> "$FAKE_LOG"
    if [[ -n "${FAKE_SWEEP_FAILS:-}" ]]; then echo "sweep: 31 passed, 1 failed, 4 skipped (stand-in)"; exit 1; fi
    echo "sweep: 32 passed, 0 failed, 4 skipped (stand-in)"
    ;;
  *) exec "$FAKE_REAL" "$@" ;;
esac
SH
chmod +x "$work/bin/nvidia-smi" "$work/bin/compute-sanitizer" "$work/moeval"

# One device-sweep.sh call on $1 stand-in GPUs (further arguments: environment for it); its log,
# $OUT and stand-in log under $work/run-<name>.
sweep() {
  local name=$1 gpus=$2; shift 2
  local repo=$work/run-$name
  rm -rf "$repo"
  cp -r "$work/repo" "$repo"
  mkdir -p "$repo/.stage/build/tools/moeval" "$repo/.stage/lib"
  cp "$work/moeval" "$repo/.stage/build/tools/moeval/moeval"
  echo "# Build directory: $repo/build" > "$repo/.stage/build/CTestTestfile.cmake"
  (cd "$repo" && env PATH="$work/bin:$PATH" FAKE_GPUS="$gpus" FAKE_LOG="$repo/calls.log" FAKE_REAL="$real" \
    OUT="$repo/out" "$@" bash ci/device-sweep.sh > "$repo/sweep.log" 2>&1)
}
summary_of() { cat "$work/run-$1/out/sweep-summary.txt"; }
expect_line() {  # run, extended regex, what it means
  grep -Eq "$2" "$work/run-$1/out/sweep-summary.txt" || { summary_of "$1"; fail "$1: $3 (no line matching '$2')"; }
}
expect_calls() {  # run, the call lines expected (one per argument; sorted, since the shards run at once)
  local expected called
  expected=$(printf '%s\n' "${@:2}" | sort)
  called=$(sort "$work/run-$1/calls.log")
  [[ "$called" == "$expected" ]] ||
    { diff <(echo "$expected") <(echo "$called") >&2 || true; fail "$1: the CLI was not called as expected (diff above: expected <, called >)"; }
}
devs() { local list=0 d; for ((d = 1; d < $1; ++d)); do list+=",$d"; done; echo "$list"; }

# 1. Eight GPUs, default shards (one per GPU).
sweep gpus8 8 || { cat "$work/run-gpus8/sweep.log"; fail "gpus8: device-sweep.sh exited non-zero"; }
calls=()
for n in 1 2 4 8; do calls+=("check devices=$(devs "$n") shard=none"); done
for s in 0 1 2 3 4 5 6 7; do calls+=("check devices=$s shard=$s/8"); done
calls+=("sweep devices=$(devs 8)")
for tool in memcheck racecheck initcheck; do calls+=("sanitizer $tool" "check devices=0 shard=none"); done
expect_calls gpus8 "${calls[@]}"
for n in 1 2 4 8; do expect_line gpus8 "^standard-${n}gpu: exit 0, .* 481 checks \(0 passed, 0 failed, 481 skipped, 0 not run\)" "the $n-GPU run"; done
expect_line gpus8 '^scaling: 2 GPUs / 1 GPU = 1\.92x' "the 2-GPU scaling figure (12.5 s / 6.5 s)"
expect_line gpus8 '^scaling: 4 GPUs / 1 GPU = 3\.57x' "the 4-GPU scaling figure (12.5 s / 3.5 s)"
expect_line gpus8 '^scaling: 8 GPUs / 1 GPU = 6\.25x .*goal >= 7\.2x' "the 8-GPU scaling figure (12.5 s / 2 s) and its goal"
expect_line gpus8 '^report merge: 8 shards into .*: 0 passed, 0 failed, 481 skipped' "the merge of 8 shards"
expect_line gpus8 '^merge of 8 shards: equals the standard-8gpu run' "the 8-shard merge's verdict"
expect_line gpus8 "^sweep \(quick, 2 seeds, GPUs $(devs 8)\): exit 0" "the quick sweep over all 8 GPUs"
for tool in memcheck racecheck initcheck; do expect_line gpus8 "^quick matrix under $tool: exit 0 .*ERROR SUMMARY: 0 errors" "the $tool run"; done
expect_line gpus8 '^device sweep: PASSED$' "the verdict"

# 2. Four GPUs, 16 shards (four a GPU, a fleet's shard count on fewer GPUs), sanitizers left out.
sweep gpus4 4 MOEVAL_SWEEP_SHARDS=16 MOEVAL_SWEEP_SKIP_SANITIZER=1 || { cat "$work/run-gpus4/sweep.log"; fail "gpus4: device-sweep.sh exited non-zero"; }
calls=()
for n in 1 2 4; do calls+=("check devices=$(devs "$n") shard=none"); done
for ((s = 0; s < 16; ++s)); do calls+=("check devices=$((s % 4)) shard=$s/16"); done
calls+=("sweep devices=$(devs 4)")
expect_calls gpus4 "${calls[@]}"
expect_line gpus4 '^merge of 16 shards: equals the standard-4gpu run' "the 16-shard merge's verdict"
expect_line gpus4 '^device sweep: PASSED$' "the verdict"

# 3. Six GPUs (not a power of two: 1, 2, 4, then all 6) and one GPU (no scaling figure, 2 shards).
sweep gpus6 6 MOEVAL_SWEEP_SKIP_SHARDS=1 MOEVAL_SWEEP_SKIP_SANITIZER=1 || fail "gpus6: device-sweep.sh exited non-zero"
expect_calls gpus6 "check devices=0 shard=none" "check devices=0,1 shard=none" "check devices=0,1,2,3 shard=none" \
  "check devices=$(devs 6) shard=none" "sweep devices=$(devs 6)"
expect_line gpus6 '^scaling: 6 GPUs / 1 GPU = 5\.00x' "the 6-GPU scaling figure (12.5 s / 2.5 s)"
sweep gpus1 1 MOEVAL_SWEEP_SKIP_SANITIZER=1 || fail "gpus1: device-sweep.sh exited non-zero"
expect_calls gpus1 "check devices=0 shard=none" "check devices=0 shard=0/2" "check devices=0 shard=1/2" "sweep devices=0"
expect_line gpus1 '^scaling: one GPU here' "the one-GPU scaling line"
expect_line gpus1 '^merge of 2 shards: equals the standard-1gpu run' "the 2-shard merge on one GPU"

# 4. A shard that fails, or a sweep that finds a difference, fails the call (verdict FAILED).
if sweep failing 4 FAKE_FAIL_SHARD=2 MOEVAL_SWEEP_SKIP_SANITIZER=1; then fail "a failing shard left device-sweep.sh's exit at 0"; fi
expect_line failing 'shard 2/4 is missing' "the merge's refusal of the missing shard"
expect_line failing '^device sweep: FAILED$' "the verdict after a failing shard"
if sweep failsweep 2 FAKE_SWEEP_FAILS=1 MOEVAL_SWEEP_SKIP_SHARDS=1 MOEVAL_SWEEP_SKIP_SANITIZER=1; then fail "a failing sweep left device-sweep.sh's exit at 0"; fi
expect_line failsweep '^sweep \(quick, 2 seeds, GPUs 0,1\): exit 1' "the failing sweep's line"
expect_line failsweep '^device sweep: FAILED$' "the verdict after a failing sweep"
echo "test-device-sweep: device-sweep.sh on 8, 4, 6 and 1 stand-in GPUs called the CLI as expected, merged every shard set, and failed on a failing shard and a failing sweep"
