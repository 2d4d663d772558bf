#!/usr/bin/env bash
# Installs what is missing, configures (preset "default" -> build/) and builds. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
if [[ ! -f build/build.ninja ]]; then
  cmake --preset default
fi
start=$(date +%s)
cmake --build --preset default -j "${MOEVAL_JOBS:-$(nproc)}"
echo "build: $(( $(date +%s) - start )) s"
