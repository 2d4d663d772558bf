#!/usr/bin/env bash
# CI check of ci/device-ab.sh without a GPU: in a scratch copy, fake CLIs (a Python stand-in that
# writes bench JSON, the "new" one 5 % faster than the baseline) go where ci/device-stage.sh and
# ci/device-stage-baseline.sh put the real ones. Checks the table the device call brings back,
# the archive of the runs, and the refusals (no variants and no baseline; a test regex that
# matches nothing). A device call costs minutes of a 30-minute budget, so its plumbing is
# checked here.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "test-device-ab: FAILED: $*" >&2; exit 1; }

mkdir -p "$work/ci" "$work/.stage/build/tools/moeval" "$work/.stage/baseline" "$work/.stage/lib"
cp ci/device-ab.sh ci/device-unpack.sh "$work/ci/"
echo "# Build directory: $work/build" > "$work/.stage/build/CTestTestfile.cmake"
cat > "$work/fake_bench.py" <<'PY'
import json, os, sys
args = sys.argv[1:]
assert args[0] == 'bench' and '--skip-cublas' in args, args
scale = float(os.environ.get('FAKE_SCALE', '1'))
cells = [{'shape': shape, 'tokens': tokens, 'marlin_kernel': 'wgmma-producer',
          'marlin_gemm_s': scale * 1e-6 * tokens, 'roofline_s': 0.5e-6 * tokens}
         for shape in ('deepseek-v3-w2', 'qwen3-30b-a3b-w13') for tokens in (256, 4096)]
json.dump({'cells': cells}, open(args[args.index('--json') + 1], 'w'))
PY
printf '#!/usr/bin/env bash\nFAKE_SCALE=0.95 exec python3 %q "$@"\n' "$work/fake_bench.py" > "$work/.stage/build/tools/moeval/moeval"
printf '#!/usr/bin/env bash\nexec python3 %q "$@"\n' "$work/fake_bench.py" > "$work/base"
chmod +x "$work/.stage/build/tools/moeval/moeval" "$work/base"
xz -c "$work/base" > "$work/.stage/baseline/moeval.xz"
echo 0123abcd > "$work/.stage/baseline/revision"

cd "$work"
# 1. No variants named: the staged baseline against the staged CLI.
OUT=$work/out1 bash ci/device-ab.sh > "$work/log1" 2>&1 || { cat "$work/log1"; fail "the default A/B exited non-zero"; }
grep -q 'base = 0123abcd' "$work/log1" || fail "the default A/B did not name the baseline's revision"
table=$work/out1/ab.txt
[[ -f $table ]] || fail "no ab.txt"
grep -Eq '^deepseek-v3-w2 M=4096 +4096\.0 +wgmma-producer 1\.000 +3891\.2 +wgmma-producer 0\.950' "$table" ||
  { cat "$table"; fail "the table's DeepSeek-V3 w2 M=4096 row is not base 4096.0 / new 3891.2 (0.950)"; }
[[ $(tar -tJf "$work/out1/ab-runs.tar.xz" | grep -c '\.json$') == 4 ]] || fail "ab-runs.tar.xz does not hold the 4 runs' JSON"
[[ ! -d $work/out1/ab-runs ]] || fail "the runs' folder was left beside the archive"
# 2. A test regex that matches no test: nothing is timed.
if OUT=$work/out2 MOEVAL_AB_TESTS=no_such_test bash ci/device-ab.sh > "$work/log2" 2>&1; then fail "a regex matching no test did not fail"; fi
grep -q 'nothing timed' "$work/log2" || fail "no 'nothing timed' for a regex matching no test"
[[ ! -f $work/out2/ab.txt ]] || fail "a regex matching no test still timed"
# 3. No baseline and no variants: refused with the way out in the message.
rm -f .stage/baseline/moeval .stage/baseline/moeval.xz
if OUT=$work/out3 bash ci/device-ab.sh > "$work/log3" 2>&1; then fail "no baseline and no variants did not fail"; fi
grep -q 'device-stage-baseline.sh' "$work/log3" || fail "the refusal does not name ci/device-stage-baseline.sh"
cd "$root"
echo "test-device-ab: the default A/B, its table and archive, and both refusals as expected"
