#!/usr/bin/env bash
# Here (no GPU), after ci/device-stage.sh: builds the moeval CLI of a revision (default HEAD, i.e. this
# tree without its uncommitted changes) in a git worktree of its own (.baseline/, git-ignored; kept,
# so the next build there is incremental), and stages it, stripped and xz-compressed, as
# .stage/baseline/moeval.xz. On the device, ci/device-ab.sh then runs it as the variant "base" beside
# the staged CLI ("new"), with no MOEVAL_AB_VARIANTS needed.
#   bash ci/device-stage-baseline.sh [REVISION]
# Why: an experiment behind a runtime switch is not main with the switch off. In the twenty-seventh
# session the switch alone made the direct stores 2-8 % slower, and the switched A/B showed a 3-7 %
# gain that main's own binary did not confirm (docs/bench.md, Experiments).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
if ! commit=$(git rev-parse --verify --quiet "$rev^{commit}"); then
  echo "device-stage-baseline: '$rev' is not a revision of this repository (give a commit, branch or tag)" >&2
  exit 2
fi
if [[ ! -d .stage ]]; then
  echo "device-stage-baseline: no .stage/ here; run bash ci/device-stage.sh first (it recreates .stage/)" >&2
  exit 2
fi
export PATH="/usr/local/cuda/bin:$PATH"
src=.baseline/src
git worktree prune
if [[ -e $src/.git ]]; then
  git -C "$src" checkout -q --detach "$commit"
else
  mkdir -p .baseline
  git worktree add -q --detach "$src" "$commit"
fi
# The same configuration as build/ (preset "default", binary dir $src/build), the CLI target only.
[[ -f $src/build/build.ninja ]] || (cd "$src" && cmake --preset default > /dev/null)
start=$(date +%s)
cmake --build "$src/build" --target moeval -j "${MOEVAL_JOBS:-$(nproc)}"
echo "baseline $(git rev-parse --short "$commit"): CLI built in $(( $(date +%s) - start )) s"
mkdir -p .stage/baseline
tmp=.stage/baseline/moeval.tmp
strip --strip-debug -o "$tmp" "$src/build/tools/moeval/moeval"
xz -9 -T1 -c "$tmp" > .stage/baseline/moeval.xz.part && mv .stage/baseline/moeval.xz.part .stage/baseline/moeval.xz
rm -f "$tmp"
echo "$commit" > .stage/baseline/revision
# Shared libraries it needs that the stage does not carry yet (not glibc, libstdc++ or CUDA's).
ldd "$src/build/tools/moeval/moeval" | awk '/=> \// {print $3}' |
  grep -Ev '/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[^/]*|libcublas[^/]*|libcudart[^/]*)\.so' |
  while read -r lib; do [[ -e .stage/lib/$(basename "$lib") ]] || cp -L "$lib" .stage/lib/; done
tree=$( { git ls-files -z; git ls-files -z --others --exclude-standard; } | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
stage=$(du -sb .stage | cut -f1)
limit=$((64 * 1024 * 1024))
echo "staged the baseline: $(du -h .stage/baseline/moeval.xz | cut -f1); carried: tree + .stage = $(( (tree + stage + 524288) / 1048576 )) MiB of 64 MiB"
if (( tree + stage > limit )); then
  echo "device-stage-baseline: the tree and .stage exceed the 64 MiB a device call carries" >&2
  exit 1
fi
