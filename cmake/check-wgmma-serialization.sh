#!/usr/bin/env bash
# Compiler launcher of the sm_90a objects (cmake/MoevalSm90a.cmake): runs the compile it is given
# and fails it where ptxas reports that it serialized the wgmma instructions of a kernel (info
# C7512 and its kin, "wgmma.mma_async instructions are serialized"). ptxas prints that as an info
# line and builds the object anyway, so -Werror does not stop it, yet every MMA of the kernel then
# waits for the one before: the Marlin producer form ran 1.2× slower on every 64-row item when a
# third item body tipped it over (docs/architecture.md, "At most two consumer item bodies").
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2> "$log"
status=$?
cat "$log" >&2
if (( status == 0 )) && grep -q "wgmma.mma_async instructions are serialized" "$log"; then
  echo "error: ptxas serialized wgmma instructions in the kernels named above (see the ptxas info lines);" \
       "every MMA would wait for the one before. Keep at most two consumer item bodies per wgmma kernel" \
       "(docs/architecture.md)." >&2
  exit 1
fi
exit "$status"
