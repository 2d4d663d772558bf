#!/usr/bin/env bash
# Bug injection for the bug classes only a GPU can show (docs/testing.md, "Which test catches which
# bug"): each mutant is the committed tree plus ONE realistic bug of a few lines in kernels/, built
# here with the normal flags; on the device the tests that claim to catch it run against it and must
# FAIL. A baseline build (no bug) of the same binaries must PASS, or "caught" would mean nothing.
#
#   here (no GPU, ~20 min on 2 cores):  bash ci/device-mutations.sh stage
#       builds in a scratch worktree of HEAD (MOEVAL_MUTANT_TREE, default /work/scratch-mutants; build
#       folder MOEVAL_MUTANT_BUILD, default build-mutants in it) and writes
#       .mutants/mutants.txz (git-ignored) — commit first: uncommitted changes are not in it.
#   device, one call, kind nvidia-h200-x2 (two mutants need two GPUs), carry [".mutants"]:
#       bash ci/device-mutations.sh run
#       prints one line per mutant (caught / MISSED / NOT RUN) and exits 1 if any was missed or
#       the baseline failed; logs under $OUT/mutants/.
#   MOEVAL_MUTANTS_ONLY="name,name": only these mutants (and the baseline of their binaries), e.g.
#       to check new rows without rebuilding every mutant. The run step without it runs the mutants
#       the stage holds.
set -uo pipefail
mode=${1:-}
root=$(cd "$(dirname "$0")/.." && pwd)
stage_dir="$root/.mutants"

# name § file § exact text (must occur once) § replacement § test binary § gtest filter § GPUs § what it is
MUTANTS=(
  "wna16-no-device-guard§kernels/wna16_moe/wna16_moe.cu§  DeviceGuard guard(device);
  if (args.blocks.num_slots == 0§  if (args.blocks.num_slots == 0§multi_gpu_tests§Registry/CrossDevice.*wna16_moe§2§the GEMM entry point launches on the caller's current device (cuda:1 class)"
  "align-no-device-guard§kernels/moe_align/moe_align.cu§  DeviceGuard guard(device);
  const detail::AlignInputs§  const detail::AlignInputs§multi_gpu_tests§Registry/CrossDevice.*wna16_moe§2§moe_align launches on the caller's current device (the seed's cuda:1 illegal access)"
  "int32-weight-offset§kernels/wna16_moe/wna16_kernel.cuh§    r.weight[i] = p.qweight + row * p.row_bytes + 16 * t;§    r.weight[i] = p.qweight + static_cast<int>(row * p.row_bytes) + 16 * t;§large_gpu_tests§Registry/Large.WeightsBeyondTwoGiB*§1§an expert's weight offset computed in 32 bits (wraps past 2 GiB)"
  "padding-row-reads-past-a§kernels/wna16_moe/wna16_kernel.cuh§(sid >= 0 && sid < p.num_slots) ? p.a§(sid >= 0 && sid <= p.num_slots) ? p.a§sanitize_gpu_tests§Registry/Sanitize.Clean/wna16_moe_memcheck§1§padding rows read the A row one past the end (result discarded: invisible to outputs and canaries)"
  "bf16-takes-the-fp16-path§kernels/wna16_moe/wna16_moe.cu§  if (args.dtype == ActDType::f16) {§  if (args.dtype == ActDType::f16 || args.dtype == ActDType::bf16) {§wna16_gpu_tests§Wna16Exact.*§1§bf16 activations run through the fp16 instantiation (the untested-bf16 class)"
  "split-k-missing-barrier§kernels/wna16_moe/wna16_kernel.cuh§      __syncthreads();
      if (wk == 0) {§      if (wk == 0) {§sanitize_gpu_tests§Registry/Sanitize.Clean/wna16_moe_racecheck§1§warp 0 sums the split-K partials without waiting for the other warps to write them (shared-memory race)"
  "wgmma-second-warpgroup-columns§kernels/marlin_moe/marlin_wgmma_kernel.cuh§const int warp_column = kGroups == 4 ? warp : warp >> 1;§const int warp_column = kGroups == 4 ? (warp & 3) : warp >> 1;§moeval_kernel_tests§Paths/*_wgmma_wg2§1§the second warpgroup of a two-warpgroup Marlin block computes the first one's tile columns (needs sm_90a)"
  "wgmma-producer-second-consumer-columns§kernels/marlin_moe/marlin_wgmma_producer_kernel.cuh§const int column = (warp >> 2) * Tile::Consumer::kTileColumns§const int column = 0 * Tile::Consumer::kTileColumns§moeval_kernel_tests§Paths/*_wgmma_producer*§1§the second consumer warpgroup of the producer form computes the first one's tile columns (needs sm_90a)"
  "marlin-zero-interleave§kernels/marlin_moe/marlin_kernel.cuh§    return (zw[0] >> (4 * wg + 16 * h)) & 0xFu;§    return (zw[0] >> (8 * wg + 4 * h)) & 0xFu;§moeval_kernel_tests§Exact/MarlinMoe.MatchesReference/uint4_g*§1§the mma.sync Marlin kernels read 4-bit zero points in plain column order, not the packed interleave (the zero-point loader class)"
  "marlin-channelwise-scale-order§kernels/marlin_moe/marlin_kernel.cuh§__ldg(row + channelwise_position(col)))§__ldg(row + col))§moeval_kernel_tests§Exact/MarlinMoe.MatchesReference/*_gch_*§1§channelwise Marlin scales read as if unpermuted (the scale-permutation class, in the kernel rather than the packer)"
  "marlin-tail-of-another-expert§kernels/marlin_moe/marlin_wgmma_producer_kernel.cuh§next = has_next && block + 1 < count && expert_next == it.expert && real(last);§next = has_next && block + 1 < count && expert_next >= 0 && real(last);§moeval_kernel_tests§ExpertTails/*§1§the producer form takes the next block's rows along as an expert tail where it holds any local expert, not only its own (needs sm_90a)"
  "marlin-last-round-piece-group§kernels/marlin_moe/marlin_wgmma_kernel.cuh§* p.groups + group) * p.n + 64 * nt + 8 * g;§* p.groups + 0 * group) * p.n + 64 * nt + 8 * g;§moeval_kernel_tests§LastRound/*§1§a K piece of a split last round (32-row items) reads its scales from the item's first group, not from its own range's (needs sm_90a)"
  "marlin-producer-never-launched§kernels/marlin_moe/marlin_moe.cu§const int wgmma_warpgroups = wgmma ? detail::choose_wgmma_warpgroups(args, p.block_capacity, sms) : 0;§const int wgmma_warpgroups = wgmma ? (detail::choose_wgmma_warpgroups(args, p.block_capacity, sms) == 3 ? 1 : detail::choose_wgmma_warpgroups(args, p.block_capacity, sms)) : 0;§moeval_kernel_tests§Paths/*_wgmma_producer*§1§a call that chose (or was forced to) the producer form runs the one-warpgroup kernel instead: every output right, the form never run (caught only by the launch record; needs sm_90a)"
  "marlin-warps-k-cap-ignored§kernels/marlin_moe/marlin_moe.cu§    if (args.max_thread_blocks > 0) resident = std::min<std::int64_t>(resident, args.max_thread_blocks);
§§moeval_kernel_tests§WarpSplits/*§1§the thread-block kernel's K split ignores the thread-block cap, so the WarpSplits cases all run one split (outputs right; caught only by the launch record)"
  "marlin-slices-never-split§kernels/marlin_moe/marlin_slice_kernel.cuh§const int slices = tail > 0 ? min(p.max_slices, warps / tail) : 1;§const int slices = 1;§moeval_kernel_tests§Slices/*_slicedtail*§1§the slice kernel keeps every last-round column whole (outputs right; caught by the slice slots left as the test wrote them)"
  "marlin-early-test-stale-parity§kernels/marlin_moe/marlin_wgmma_producer_kernel.cuh§const unsigned next_phase = next == 0 ? phase ^ 1u : phase;§const unsigned next_phase = phase;§large_gpu_tests§Registry/Large.MemoryBoundEightBitWeightsAtFullLoad/marlin_moe§1§a consumer asks the next chunk's barrier with this round's parity where the ring wraps, so it may read a stage the producer is still filling (shows where the copies fall behind the reads: a memory-bound GEMM at full load; needs sm_90a)"
)
# MOEVAL_MUTANTS_ONLY: keep the named mutants only.
if [[ -n "${MOEVAL_MUTANTS_ONLY:-}" ]]; then
  kept=()
  for m in "${MUTANTS[@]}"; do
    [[ ",$MOEVAL_MUTANTS_ONLY," == *",${m%%§*},"* ]] && kept+=("$m")
  done
  (( ${#kept[@]} > 0 )) || { echo "MOEVAL_MUTANTS_ONLY=$MOEVAL_MUTANTS_ONLY names no mutant" >&2; exit 2; }
  MUTANTS=("${kept[@]}")
fi
# Where each test binary lives in the build tree.
declare -A BINARY_PATH=([multi_gpu_tests]=testbed/tests [large_gpu_tests]=testbed/tests
                        [sanitize_gpu_tests]=testbed/tests [wna16_gpu_tests]=testbed/tests
                        [moeval_kernel_tests]=kernels/tests)

# Field $2 of record $1 (fields may hold newlines and '|', so they are split on '§' by python).
split() { python3 -c 'import sys; print(sys.argv[1].split("\u00a7")[int(sys.argv[2])], end="")' "$1" "$2"; }

stage() {
  local scratch=${MOEVAL_MUTANT_TREE:-/work/scratch-mutants}
  export PATH="/usr/local/cuda/bin:$PATH"
  [[ -d "$scratch" ]] || git -C "$root" worktree add --detach "$scratch" HEAD
  # A stage that stopped half-way (a mutant that did not build) leaves its edit behind: drop it.
  git -C "$scratch" checkout -q -- . && git -C "$scratch" checkout --detach -q "$(git -C "$root" rev-parse HEAD)"
  local build=${MOEVAL_MUTANT_BUILD:-$scratch/build-mutants}
  [[ -f "$build/build.ninja" ]] || cmake -S "$scratch" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DMOEVAL_WERROR=ON > /dev/null
  rm -rf "$stage_dir" && mkdir -p "$stage_dir/out/lib"
  build_into() {  # $1: output folder name, then the test binaries to build and keep
    local folder=$1; shift
    cmake --build "$build" --target "$@" -j "${MOEVAL_JOBS:-2}" > "$stage_dir/build-$folder.log" 2>&1 || {
      echo "build of $folder failed: $stage_dir/build-$folder.log"; exit 1; }
    mkdir -p "$stage_dir/out/$folder"
    for b in "$@"; do strip --strip-debug -o "$stage_dir/out/$folder/$b" "$build/${BINARY_PATH[$b]}/$b"; done
  }
  local binaries=() m
  for m in "${MUTANTS[@]}"; do binaries+=("$(split "$m" 4)"); done
  mapfile -t binaries < <(printf '%s\n' "${binaries[@]}" | sort -u)
  build_into baseline "${binaries[@]}"
  for m in "${MUTANTS[@]}"; do
    local name file old new
    name=$(split "$m" 0); file=$(split "$m" 1); old=$(split "$m" 2); new=$(split "$m" 3)
    cp "$scratch/$file" "$stage_dir/original"
    python3 - "$scratch/$file" "$old" "$new" <<'PY' || exit 1
import sys
path, old, new = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"mutation does not apply: {old!r} occurs {text.count(old)} times in {path}")
open(path, "w").write(text.replace(old, new))
PY
    echo "building mutant $name"
    build_into "$name" "$(split "$m" 4)"
    cp "$stage_dir/original" "$scratch/$file" && rm "$stage_dir/original"
  done
  # Shared libraries outside glibc/libstdc++/CUDA travel along (as in ci/device-stage.sh).
  for b in "$stage_dir"/out/baseline/*; do ldd "$b"; done | awk '/=> \// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[^/]*|libcublas[^/]*|libcudart[^/]*)\.so' |
    xargs -r -I{} cp -L {} "$stage_dir/out/lib/"
  git -C "$scratch" rev-parse HEAD > "$stage_dir/out/commit"  # what was built (HEAD may move meanwhile)
  # Only 64 MiB travel to the device: one solid xz archive finds the kernels' device code repeated
  # across the binaries (six test binaries of 36 MB: 71 MB as gzip, 29 MB as xz -9).
  tar -C "$stage_dir/out" -cf - . | xz -9 -T1 > "$stage_dir/mutants.txz" && rm -rf "$stage_dir/out"
  echo "staged $(du -h "$stage_dir/mutants.txz" | cut -f1) in .mutants/mutants.txz (commit $(git -C "$scratch" rev-parse --short HEAD))"
}

run() {
  local out=${OUT:-$stage_dir/log}/mutants work="$stage_dir/run"
  mkdir -p "$out" && rm -rf "$work" && mkdir -p "$work"
  tar -C "$work" -xJf "$stage_dir/mutants.txz"
  # Without MOEVAL_MUTANTS_ONLY, the mutants this stage holds (one folder each): a stage of some rows
  # then runs those rows alone instead of reporting the others' missing binaries as failures.
  if [[ -z "${MOEVAL_MUTANTS_ONLY:-}" ]]; then
    local staged=() m
    for m in "${MUTANTS[@]}"; do [[ -d "$work/${m%%§*}" ]] && staged+=("$m"); done
    (( ${#staged[@]} > 0 )) || { echo "the stage holds no mutant folder: stage again" >&2; exit 2; }
    (( ${#staged[@]} == ${#MUTANTS[@]} )) || echo "the stage holds ${#staged[@]} of the ${#MUTANTS[@]} mutants: only those run"
    MUTANTS=("${staged[@]}")
  fi
  export LD_LIBRARY_PATH="$work/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
  command -v compute-sanitizer > /dev/null || export PATH="$PATH:/usr/local/cuda/bin"
  local gpus status=0 ran=0
  gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
  echo "mutants of commit $(cat "$work/commit"), $gpus GPU(s)"
  # Baseline: every named test must pass on the unmutated build.
  for m in "${MUTANTS[@]}"; do
    local name binary filter needs
    name=$(split "$m" 0); binary=$(split "$m" 4); filter=$(split "$m" 5); needs=$(split "$m" 6)
    (( gpus >= needs )) || continue
    if ! "$work/baseline/$binary" --gtest_filter="$filter" > "$out/baseline-$name.log" 2>&1 ||
       grep -q '\[  SKIPPED \]' "$out/baseline-$name.log"; then
      echo "BASELINE FAILED  $binary --gtest_filter='$filter' (see $out/baseline-$name.log)"
      status=1
    fi
  done
  for m in "${MUTANTS[@]}"; do
    local name binary filter needs what log
    name=$(split "$m" 0); binary=$(split "$m" 4); filter=$(split "$m" 5); needs=$(split "$m" 6); what=$(split "$m" 7)
    log="$out/$name.log"
    if (( gpus < needs )); then
      printf '%-26s NOT RUN (needs %s GPUs)  %s\n' "$name" "$needs" "$what"
      continue
    fi
    if [[ ! -x "$work/$name/$binary" ]]; then  # a missing binary would "fail" its tests: not a catch
      printf '%-26s NOT RUN (not staged: stage and run with the same MOEVAL_MUTANTS_ONLY)  %s\n' "$name" "$what"
      status=1
      continue
    fi
    timeout 300 "$work/$name/$binary" --gtest_filter="$filter" > "$log" 2>&1
    local rc=$?
    ran=$((ran + 1))
    if grep -q '\[  SKIPPED \]' "$log"; then
      printf '%-26s NOT RUN (skipped)  %s\n' "$name" "$what"; status=1
    elif (( rc != 0 )); then
      printf '%-26s caught by %s %s (exit %s)  %s\n' "$name" "$binary" "$filter" "$rc" "$what"
    else
      printf '%-26s MISSED: %s %s passed  %s\n' "$name" "$binary" "$filter" "$what"; status=1
    fi
  done
  if (( ran == 0 )); then echo "no mutant ran (no GPU?)"; status=1; fi
  exit $status
}

case "$mode" in
  stage) stage ;;
  run) run ;;
  *) echo "usage: bash ci/device-mutations.sh stage|run" >&2; exit 2 ;;
esac
