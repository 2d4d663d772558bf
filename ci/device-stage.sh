#!/usr/bin/env bash
# Here (no GPU): build, then stage a lean copy of build/ for the device machine in .stage/
# (test binaries, ctest files, the moeval CLI, and the few shared libraries the device lacks).
# (xz-compressed: only 64 MiB travel). Then one device call runs everything:  device run  command="bash ci/device-gpu-tier.sh"  carry=[".stage"]
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/stage-helpers.sh
bash ci/build.sh
rm -rf .stage && mkdir -p .stage/lib
# ctest needs CTestTestfile.cmake and the gtest discovery files; object files and archives stay here.
tar -C . --exclude='*.o' --exclude='*.a' --exclude='CMakeFiles' --exclude='.ninja_*' --exclude='build.ninja' \
    --exclude='compile_commands.json' --exclude='*.h5.tmp*' -cf - build | tar -C .stage -xf -
# Debug info stays here; CPU-only test binaries stay here too (the device runs the gpu labels).
find .stage/build -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && strip --strip-debug "$1"' _ {} \;
# The cpu-labelled binaries are the prefixes (binary.Suite.Test) of the tests ctest lists for cpu.
cpu_only=$(ctest --test-dir build -N -L '^cpu$' | sed -n 's/^ *Test *#[0-9]*: \([^.]*\)\..*/\1/p' | sort -u)
for name in $cpu_only moeval_reference_timing; do
  find .stage/build -type f -name "$name" -delete
done
# Shared libraries outside glibc/libstdc++/CUDA (which the device machine has) travel along.
mapfile -t executables < <(find .stage/build -type f -perm -u+x)
stage_shared_libs "${executables[@]}"
# Only 64 MiB travel to the device: the tree goes as one xz archive with a 64 MiB dictionary. Every
# test binary embeds the same kernels' device code (~15 MB); compressed per file (gzip) the stage
# was 88 MB, solid xz -9 finds the repeats across binaries (9.4 MB on 2026-11-30).
tar -C .stage -cf - build | xz -9 -T1 > .stage/build.txz && rm -rf .stage/build
echo "staged: $(du -sh .stage | cut -f1) in .stage ($(find .stage/lib -type f | wc -l) extra shared libraries)"
check_carried_size device-stage
