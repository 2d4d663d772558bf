#!/usr/bin/env bash
# libFuzzer targets (fuzz/, built with Debian's clang, ASan + UBSan): writes the seed corpora, then
# runs each target for MOEVAL_FUZZ_SECONDS (default 15) — the smoke run of CI. A crash, a leak, an
# uncaught exception or a sanitizer report fails the script and leaves the input in build-fuzz/.
# The long run (docs/fuzzing.md) is the same command with more seconds or -runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
seconds="${MOEVAL_FUZZ_SECONDS:-15}"
start=$(date +%s)
if [[ ! -f build-fuzz/build.ninja ]]; then
  cmake -S fuzz -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
fi
cmake --build build-fuzz -j "${MOEVAL_JOBS:-$(nproc)}"
echo "fuzz: build $(( $(date +%s) - start )) s"
corpus=build-fuzz/corpus
build-fuzz/fuzz_seeds "$corpus/seeds"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp"  # HDF5's own leaks on corrupt files (docs/fuzzing.md)
for target in golden_file_fuzz case_loader_fuzz problem_fuzz; do
  seeds="$corpus/seeds/${target%_fuzz}"
  mkdir -p "$corpus/$target" build-fuzz/artifacts
  log="build-fuzz/$target.log"
  if ! build-fuzz/"$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 -max_len=20480 \
         -artifact_prefix=build-fuzz/artifacts/"$target"- "$corpus/$target" "$seeds" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz: $target FAILED (input saved under build-fuzz/artifacts/)" >&2
    exit 1
  fi
  echo "fuzz: $target $(grep -o 'Done [0-9]* runs' "$log" | tail -1) in ${seconds} s, no crash"
done
