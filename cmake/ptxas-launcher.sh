#!/usr/bin/env bash
# Compiler launcher of the production kernels' CUDA objects (kernels/CMakeLists.txt and
# cmake/MoevalSm90a.cmake): runs the compile it is given with ptxas's resource report turned on
# (-Xptxas=-v: registers, spills, stack and shared memory of every kernel, the same code either
# way), and
# - writes that report next to the object (<object>.ptxas), where the cpu tier's resource-budget
#   test reads it (tools/kernel_budget/check_budget.py, docs/testing.md "Kernel resource budget"),
#   leaving the build log as quiet as without it;
# - fails the compile where ptxas serialized the wgmma instructions of a kernel (info C7512 and its
#   kin, "wgmma.mma_async instructions are serialized"): ptxas prints that as an info line and
#   builds the object anyway, so -Werror does not stop it, yet every MMA of the kernel then waits
#   for the one before (the Marlin producer form ran 1.2× slower on every 64-row item when a third
#   item body tipped it over: docs/architecture.md, "At most two consumer item bodies").
set -uo pipefail
# The object: nvcc's -o FILE, -o=FILE, --output-file FILE or --output-file=FILE (CMake's rules use
# -o FILE; other options that start with -o, such as -odir, name no object).
object=""
previous=""
for arg in "$@"; do
  case "$previous" in -o | --output-file) object=$arg ;; esac
  case "$arg" in
    --output-file=*) object=${arg#--output-file=} ;;
    -o=*) object=${arg#-o=} ;;
  esac
  previous=$arg
done
# A report never outlives the compile it came from: removed before it, written after it succeeds.
[[ -n "$object" ]] && rm -f "$object.ptxas"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" -Xptxas=-v 2> "$log"
status=$?
# The report's own lines (routine with -v); everything else ptxas or nvcc says passes through.
report='^ptxas info +: (Compiling entry function|Function properties for|Used [0-9]+ registers|[0-9]+ bytes gmem|Compile time)|^ +[0-9]+ bytes stack frame'
grep -v -E "$report" "$log" >&2
(( status == 0 )) || exit "$status"
if grep -q "wgmma.mma_async instructions are serialized" "$log"; then
  # Each serialization line with the kernel it was compiling.
  awk '/Compiling entry function/ { kernel = $0 } /instructions are serialized/ { print kernel }' "$log" | sort -u >&2
  echo "error: ptxas serialized wgmma instructions in the kernels named above (see the ptxas info lines);" \
       "every MMA would wait for the one before. Keep at most two consumer item bodies per wgmma kernel" \
       "(docs/architecture.md)." >&2
  [[ -n "$object" ]] && rm -f "$object"  # a failed compile leaves no object for the next build to take
  exit 1
fi
if [[ -n "$object" ]]; then
  # Written whole or not at all: a half-written report would read as kernels gone missing. Empty
  # where nothing was compiled to SASS (a PTX-only build runs no ptxas): the checker skips those.
  if ! { { grep -E "$report" "$log" || true; } > "$object.ptxas.tmp" && mv "$object.ptxas.tmp" "$object.ptxas"; }; then
    echo "error: could not write the ptxas report $object.ptxas" >&2
    rm -f "$object" "$object.ptxas.tmp"
    exit 1
  fi
fi
exit 0
