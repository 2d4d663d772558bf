# shellcheck shell=bash
# Sourced by the device scripts (device-gpu-tier.sh, device-sweep.sh) on the device machine, from the
# repository root with .stage/ carried: unpacks the staged build (ci/device-stage.sh) into .stage/build,
# links it as build/, and recreates the absolute build path the ctest files were written with.
# Sets root, out (= $OUT, or .stage/out) and LD_LIBRARY_PATH.
root=$PWD
out=${OUT:-$root/.stage/out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$root/.stage/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

if [[ -f .stage/build.txz ]]; then tar -C .stage -xJf .stage/build.txz && rm -f .stage/build.txz; fi
# ctest files carry the absolute paths of the machine that built them (/work/main/build/...).
built_at=$(sed -n 's/^# Build directory: //p' .stage/build/CTestTestfile.cmake)
ln -sfn .stage/build build
if [[ "$built_at" != "$root/build" ]]; then
  mkdir -p "$(dirname "$(dirname "$built_at")")"
  ln -sfn "$root" "$(dirname "$built_at")"
fi
