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
source ci/stage-helpers.sh
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
stage_shared_libs "$src/build/tools/moeval/moeval"
echo "staged the baseline: $(du -h .stage/baseline/moeval.xz | cut -f1)"
check_carried_size device-stage-baseline
