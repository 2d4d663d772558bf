#!/usr/bin/env bash
# libFuzzer targets (fuzz/, built with Debian's clang, ASan + UBSan): writes the seed corpora, then
# runs each target for MOEVAL_FUZZ_SECONDS (default 15) — the smoke run of CI. A crash, a leak, an
# uncaught exception or a sanitizer report fails the script and leaves the input in build-fuzz/.
# The long run (docs/fuzzing.md): MOEVAL_FUZZ_RUNS=1000000 runs each target for that many
# executions instead of a time box (with MOEVAL_FUZZ_SECONDS too: whichever comes first);
# MOEVAL_FUZZ_TARGETS picks the targets (space-separated, in order).
# Each target's log keeps libFuzzer's final stats (build-fuzz/<target>.log).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
seconds="${MOEVAL_FUZZ_SECONDS:-15}"
runs="${MOEVAL_FUZZ_RUNS:-}"
targets="${MOEVAL_FUZZ_TARGETS:-golden_file_fuzz case_loader_fuzz problem_fuzz}"
budget=()  # with both set, whichever limit comes first ends a target's run
[[ -z "$runs" ]] || budget+=(-runs="$runs")
[[ -n "$runs" && -z "${MOEVAL_FUZZ_SECONDS:-}" ]] || budget+=(-max_total_time="$seconds")
start=$(date +%s)
if [[ ! -f build-fuzz/build.ninja ]]; then
  cmake -S fuzz -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
fi
cmake --build build-fuzz -j "${MOEVAL_JOBS:-$(nproc)}"
echo "fuzz: build $(( $(date +%s) - start )) s"
corpus=build-fuzz/corpus
build-fuzz/fuzz_seeds "$corpus/seeds"
# allocator_may_return_null=1: an impossible allocation (HDF5 sizing a buffer from a corrupt field)
# returns NULL as glibc does in the plain build, and HDF5 reports an error; ASan's default aborts
# instead, which tests the sanitizer's policy rather than the tool (docs/fuzzing.md).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp"  # HDF5's own leaks on corrupt files (docs/fuzzing.md)
for target in $targets; do
  seeds="$corpus/seeds/${target%_fuzz}"
  mkdir -p "$corpus/$target" build-fuzz/artifacts
  log="build-fuzz/$target.log"
  t0=$(date +%s)
  if ! build-fuzz/"$target" "${budget[@]}" -rss_limit_mb=2048 -timeout=30 -max_len=20480 -print_final_stats=1 \
         -artifact_prefix=build-fuzz/artifacts/"$target"- "$corpus/$target" "$seeds" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz: $target FAILED (input saved under build-fuzz/artifacts/)" >&2
    exit 1
  fi
  echo "fuzz: $target $(grep -o 'Done [0-9]* runs' "$log" | tail -1) in $(( $(date +%s) - t0 )) s, no crash;" \
       "$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)"
done
