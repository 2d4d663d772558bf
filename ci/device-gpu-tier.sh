#!/usr/bin/env bash
# On the device machine, from the repository root, with .stage/ carried (see ci/device-stage.sh):
# runs the whole gpu + multi_gpu tier (and `large` unless MOEVAL_SKIP_LARGE=1), then the bench when
# MOEVAL_BENCH=1 (and compute-sanitizer memcheck on a small matrix when MOEVAL_MEMCHECK=1), writing logs, JUnit and JSON under $OUT, and prints a summary last.
set -uo pipefail
root=$PWD
out=${OUT:-$root/.stage/out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$root/.stage/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

[[ -f .stage/build.tgz ]] && tar -C .stage -xzf .stage/build.tgz
# ctest files carry the absolute paths of the machine that built them (/work/main/build/...).
built_at=$(sed -n 's/^# Build directory: //p' .stage/build/CTestTestfile.cmake)
ln -sfn .stage/build build
if [[ "$built_at" != "$root/build" ]]; then
  mkdir -p "$(dirname "$(dirname "$built_at")")"
  ln -sfn "$root" "$(dirname "$built_at")"
fi

nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "$out/devices.txt"
labels='gpu|multi_gpu'
[[ "${MOEVAL_SKIP_LARGE:-0}" == 1 ]] || labels='gpu|multi_gpu|large'
start=$(date +%s)
ctest --test-dir build -L "$labels" -j "${MOEVAL_JOBS:-4}" --output-on-failure --timeout 600 \
      --output-junit "$out/gpu-junit.xml" > "$out/gpu-tier.log" 2>&1
status=$?
echo "gpu tier: $(( $(date +%s) - start )) s, ctest exit $status"
if [[ "${MOEVAL_MEMCHECK:-0}" == 1 ]]; then
  # compute-sanitizer memcheck on a small matrix through the testbed (align, GEMM, layer kernels).
  compute-sanitizer --tool memcheck --error-exitcode 3 build/testbed/tests/wna16_gpu_tests \
      --gtest_filter='Wna16Exact.Gemm2*:Wna16Routing.*:Wna16Blocks.*' > "$out/memcheck.log" 2>&1 || status=1
  compute-sanitizer --tool memcheck --error-exitcode 3 build/testbed/tests/layer_gpu_tests \
      --gtest_filter='LayerGpu.ExpertParallelAndEmptyExperts:LayerGpu.SingleTokenSingleExpert' >> "$out/memcheck.log" 2>&1 || status=1
  echo "memcheck: $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tr '\n' ' ')"
fi
if [[ "${MOEVAL_BENCH:-0}" == 1 ]]; then
  build/tools/moeval/moeval bench --json "$out/bench.json" > "$out/bench.txt" 2>&1 || status=1
  cat "$out/bench.txt"
fi
echo "----- gpu tier summary -----"
grep -E "tests passed|tests failed|Failed|\*\*\*|Skipped|Label Time|^ *(gpu|multi_gpu|large|cpu) *=" "$out/gpu-tier.log" | tail -60
exit $status
