#!/usr/bin/env bash
# Here (no GPU): build, then stage a lean copy of build/ for the device machine in .stage/
# (test binaries, ctest files, the moeval CLI, and the few shared libraries the device lacks).
# (compressed: only 64 MiB travel). Then one device call runs everything:  device run  command="bash ci/device-gpu-tier.sh"  carry=[".stage"]
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh
rm -rf .stage && mkdir -p .stage/lib
# ctest needs CTestTestfile.cmake and the gtest discovery files; object files and archives stay here.
tar -C . --exclude='*.o' --exclude='*.a' --exclude='CMakeFiles' --exclude='.ninja_*' --exclude='build.ninja' \
    --exclude='compile_commands.json' --exclude='*.h5.tmp*' -cf - build | tar -C .stage -xf -
# Debug info stays here; CPU-only test binaries stay here too (the device runs the gpu labels).
find .stage/build -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && strip --strip-debug "$1"' _ {} \;
for cpu_only in fixtures/tests/fixtures_tests golden/tests/golden_tests reference/cpu/tests/reference_cpu_tests \
                reference/tolerance/tests/tolerance_tests testbed/tests/testbed_tests reference/cpu/moeval_reference_timing; do
  rm -f ".stage/build/$cpu_only"
done
# Shared libraries outside glibc/libstdc++/CUDA (which the device machine has) travel along.
find .stage/build -type f -perm -u+x -exec sh -c 'ldd "$1" 2>/dev/null' _ {} \; |
  awk '/=> \// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[^/]*|libcublas[^/]*|libcudart[^/]*)\.so' |
  xargs -r -I{} cp -L {} .stage/lib/
# Only 64 MiB travel to the device: the tree goes as one compressed archive.
tar -C .stage -czf .stage/build.tgz build && rm -rf .stage/build
echo "staged: $(du -sh .stage | cut -f1) in .stage ($(ls .stage/lib | wc -l) extra shared libraries)"
