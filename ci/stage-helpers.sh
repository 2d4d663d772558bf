# shellcheck shell=bash
# Sourced by ci/device-stage.sh and ci/device-stage-baseline.sh (here, from the repository root):
# what both need to put binaries in .stage/ for the device machine.

# Copies into .stage/lib the shared libraries the given executables load that the device machine
# lacks (all but glibc, libstdc++ and CUDA's, which it has) and that .stage/lib does not hold yet.
stage_shared_libs() {
  local exe lib
  # ldd fails on an executable that is not ELF (a script): that one adds nothing.
  for exe in "$@"; do ldd "$exe" 2>/dev/null || true; done | awk '/=> \// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[^/]*|libcublas[^/]*|libcudart[^/]*)\.so' |
    while read -r lib; do [[ -e .stage/lib/$(basename "$lib") ]] || cp -L "$lib" .stage/lib/; done
}

# What a device call carries: the working tree (tracked files and untracked ones git does not
# ignore) plus the carried paths, 64 MiB in all. Says how much the tree, .stage and .deps take, and
# fails (naming the caller, $1) where the tree and .stage alone pass 64 MiB.
check_carried_size() {
  local tree stage deps limit=$((64 * 1024 * 1024))
  tree=$( { git ls-files -z; git ls-files -z --others --exclude-standard; } | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
  stage=$(du -sb .stage | cut -f1)
  deps=$( [[ -d .deps ]] && du -sb .deps | cut -f1 || echo 0)
  mib() { echo "$(( ($1 + 524288) / 1048576 )) MiB"; }
  echo "carried: tree $(mib "$tree") + .stage $(mib "$stage") = $(mib $((tree + stage))) of 64 MiB; with .deps $(mib $((tree + stage + deps)))"
  if (( tree + stage > limit )); then
    echo "$1: the tree and .stage exceed the 64 MiB a device call carries: shrink docs/results or the stage" >&2
    return 1
  fi
}
