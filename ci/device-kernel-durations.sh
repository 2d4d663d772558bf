#!/usr/bin/env bash
# On the device machine, from the repository root with .stage/ carried (ci/device-stage.sh): the
# Marlin kernels' own durations on the bench's cells, beside the bench's event-timed medians.
# The bench times each call between two CUDA events after an L2 flush (tools/bench/event_timer.h),
# which adds the launch and the events' own cost (an empty kernel reads ~2.8 µs on the H200) to
# the kernel; a profiler's kernel duration leaves that out. So this runs, in one call:
#   1. `moeval bench --skip-cublas --tokens T` as usual (the event-timed medians);
#   2. the same command under ncu: gpu__time_duration of every Marlin GEMM launch, caches flushed
#      before each launch (--cache-control all, the clean flush's state) and clocks left alone
#      (--clock-control none); a cell's launches are its warm-up and timed calls, with and without
#      moe_align before them (6 + 2·repeats), taken in the bench's cell order;
# and prints per cell both times and both fractions of the roofline.
#   MOEVAL_DURATION_TOKENS  token counts (default 1,4,16,64: the cells where a few µs matter)
#   MOEVAL_DURATION_SHAPES  shapes (default all)
# Writes $OUT/durations.txt, $OUT/durations-bench.json and $OUT/durations-ncu.csv.
set -uo pipefail
source ci/device-unpack.sh
command -v ncu > /dev/null || export PATH="$PATH:/usr/local/cuda/bin"
tokens=${MOEVAL_DURATION_TOKENS:-1,4,16,64}
shapes=${MOEVAL_DURATION_SHAPES:-all}
repeats=5
warmup=3  # CellOptions::warmup
cli=build/tools/moeval/moeval
"$cli" bench --skip-cublas --shapes "$shapes" --tokens "$tokens" --json "$out/durations-bench.json" > /dev/null || exit 1
ncu --clock-control none --cache-control all --print-units base --csv --metrics gpu__time_duration.sum \
    -k 'regex:^marlin_(moe|wgmma)_(column_|slice_|producer_)?kernel$' \
    "$cli" bench --skip-cublas --shapes "$shapes" --tokens "$tokens" --repeats "$repeats" \
    --json "$out/durations-ncu-bench.json" > "$out/durations-ncu.csv" 2> "$out/durations-ncu.err" || {
  tail -20 "$out/durations-ncu.err"; exit 1; }
rm -f "$out/durations-ncu-bench.json"
python3 - "$out" $((warmup * 2 + repeats * 2)) <<'PY' | tee "$out/durations.txt"
import csv, io, json, statistics, sys
out, per_cell = sys.argv[1], int(sys.argv[2])
text = open(f"{out}/durations-ncu.csv").read()
rows = list(csv.DictReader(io.StringIO(text[text.index('"ID"'):])))
# ncu writes values with thousands separators ("37,120" ns).
launches = [(r["Kernel Name"].split("<")[0].removeprefix("void "), float(r["Metric Value"].replace(",", "")))
            for r in rows if r["Metric Name"] == "gpu__time_duration.sum"]
cells = json.load(open(f"{out}/durations-bench.json"))["cells"]
if len(launches) != per_cell * len(cells):
    sys.exit(f"{len(launches)} profiled launches for {len(cells)} cells of {per_cell}: the grouping would be wrong")
print(f"# kernel = ncu gpu__time_duration (median of the cell's {per_cell} launches, caches flushed before each);"
      " event = the bench's median (same binary, run just before)")
print(f"{'cell':28} {'kernel':>16} {'event us':>9} {'kernel us':>9} {'roof us':>8} {'event frac':>10} {'kernel frac':>11}")
for i, c in enumerate(cells):
    group = launches[i * per_cell:(i + 1) * per_cell]
    names = {n for n, _ in group}
    kernel_s = statistics.median(v for _, v in group) * 1e-9
    roof = c["roofline_s"]
    print(f"{c['shape'] + ' M=' + str(c['tokens']):28} {c['marlin_kernel']:>16} {c['marlin_gemm_s'] * 1e6:9.1f}"
          f" {kernel_s * 1e6:9.1f} {roof * 1e6:8.1f} {roof / c['marlin_gemm_s']:10.2f} {roof / kernel_s:11.2f}"
          + ("" if len(names) == 1 else f"  (launches of {len(names)} kernels: {sorted(names)})"))
PY
