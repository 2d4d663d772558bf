#!/usr/bin/env bash
# On the device machine, from the repository root with .stage/ carried (ci/device-stage.sh): a
# same-run A/B of `moeval bench --skip-cublas` variants, each run MOEVAL_AB_ROUNDS times (default 2)
# in alternating order (A B B A A B ...), and a table of the Marlin GEMM times per cell and run.
#   MOEVAL_AB_VARIANTS  "name=extra bench options;name=..."   (a binary other than the staged one:
#                       name@path=options, path relative to the repository root). Default, where
#                       ci/device-stage-baseline.sh staged a baseline CLI: "base@<it>=;new=", the
#                       baseline revision's binary against the staged one; otherwise required.
#   MOEVAL_AB_ARGS      options for every run (default: --tokens 256,2048,4096,8192)
#   MOEVAL_AB_TIMEOUT   seconds one run may take (default 300)
#   MOEVAL_AB_TESTS     a ctest regex: first run those gpu- and sanitize-labelled tests of the staged
#                       build (the changed kernel's cases), and time nothing if one fails
# Writes $OUT/ab.txt (the table: the fastest run of each variant, its ratio to the first variant's,
# then every run) and $OUT/ab-runs.tar.xz (each run's JSON and log: one file, since a device call
# brings back only a few files).
set -uo pipefail
source ci/device-unpack.sh
baseline=.stage/baseline/moeval
if [[ -f $baseline.xz ]]; then xz -d -c "$baseline.xz" > "$baseline" && chmod +x "$baseline" && rm -f "$baseline.xz"; fi
if [[ -z "${MOEVAL_AB_VARIANTS:-}" && -x $baseline ]]; then
  MOEVAL_AB_VARIANTS="base@$baseline=;new="
  echo "variants: base = $(cat .stage/baseline/revision 2>/dev/null || echo '?') (the baseline CLI), new = the staged CLI"
fi
IFS=';' read -r -a variants <<< "${MOEVAL_AB_VARIANTS:?set MOEVAL_AB_VARIANTS, e.g. 'wg2=--marlin-wgmma-warpgroups 2;wg3=--marlin-wgmma-warpgroups 3', or stage a baseline (ci/device-stage-baseline.sh)}"
runs_dir=$out/ab-runs
mkdir -p "$runs_dir"
if [[ -n "${MOEVAL_AB_TESTS:-}" ]]; then
  command -v compute-sanitizer > /dev/null || export PATH="$PATH:/usr/local/cuda/bin"
  ctest --test-dir build -L 'gpu|sanitize' -R "$MOEVAL_AB_TESTS" -j 8 --timeout 300 --output-on-failure > "$out/ab-tests.log" 2>&1
  tests_status=$?
  grep -E 'tests passed|tests failed|\*\*\*Failed|Total Test time' "$out/ab-tests.log" | tail -12
  if (( tests_status != 0 )); then
    echo "device-ab: tests matching '$MOEVAL_AB_TESTS' failed (ctest exit $tests_status; $out/ab-tests.log): nothing timed"
    exit 1
  fi
  if grep -q 'No tests were found' "$out/ab-tests.log"; then
    echo "device-ab: no gpu or sanitize test matches '$MOEVAL_AB_TESTS': nothing timed"
    exit 1
  fi
fi
rounds=${MOEVAL_AB_ROUNDS:-2}
args=${MOEVAL_AB_ARGS:---tokens 256,2048,4096,8192}
order=()
for ((r = 0; r < rounds; ++r)); do
  if (( r % 2 == 0 )); then order+=("${variants[@]}"); else for ((i = ${#variants[@]} - 1; i >= 0; --i)); do order+=("${variants[i]}"); done; fi
done
status=0
run=0
for v in "${order[@]}"; do
  run=$((run + 1))
  name=${v%%=*}; opts=${v#*=}
  bin=build/tools/moeval/moeval
  if [[ "$name" == *@* ]]; then bin=${name#*@}; name=${name%%@*}; fi
  echo "run $run: $name ($bin bench --skip-cublas $args $opts)"
  # shellcheck disable=SC2086
  timeout "${MOEVAL_AB_TIMEOUT:-300}" "$bin" bench --skip-cublas $args $opts --json "$runs_dir/ab-$name-$run.json" > "$runs_dir/ab-$name-$run.txt" 2>&1 || { status=1; tail -5 "$runs_dir/ab-$name-$run.txt"; }
done
python3 - "$runs_dir" "${variants[@]}" <<'PY' | tee "$out/ab.txt"
import glob, json, os, re, sys
out, variants = sys.argv[1], [v.split('=', 1)[0].split('@')[0] for v in sys.argv[2:]]
runs = []  # (run number, variant, {cell: (seconds, kernel, roofline seconds)})
for path in glob.glob(os.path.join(out, 'ab-*-*.json')):
    m = re.match(r'ab-(.+)-(\d+)\.json$', os.path.basename(path))
    cells = {}
    for c in json.load(open(path))['cells']:
        cells[f"{c['shape']} M={c['tokens']}"] = (c['marlin_gemm_s'], c['marlin_kernel'], c['roofline_s'])
    runs.append((int(m.group(2)), m.group(1), cells))
runs.sort()
names = sorted({cell for _, _, cells in runs for cell in cells}, key=lambda s: (s.split()[0], int(s.split('=')[1])))
print('cell'.ljust(30) + ''.join(v.rjust(27) for v in variants) + '  roofline')
for cell in names:
    best = {}
    for _, v, cells in runs:
        if cell in cells and (v not in best or cells[cell][0] < best[v][0]): best[v] = cells[cell]
    base = best.get(variants[0], (None,))[0]
    line = cell.ljust(30)
    for v in variants:
        if v in best:
            s, kernel, _ = best[v]
            line += f"{s * 1e6:9.1f} {kernel:>14} {s / base if base else 0:.3f}"
        else:
            line += ' ' * 27
    roof = next(iter(best.values()))[2]
    print(line + f"  {roof * 1e6:8.1f}")
print('\n# every run (µs)')
print('cell'.ljust(30) + ''.join(f"{n}-{v}".rjust(12) for n, v, _ in runs))
for cell in names:
    print(cell.ljust(30) + ''.join((f"{cells[cell][0] * 1e6:12.1f}" if cell in cells else ' ' * 12) for _, _, cells in runs))
PY
tar -C "$out" -cJf "$out/ab-runs.tar.xz" ab-runs && rm -rf "$runs_dir"
exit $status
