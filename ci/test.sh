#!/usr/bin/env bash
# The test command of README.md: build whatever is missing, then run every test ctest knows.
# Without a GPU the gpu/multi_gpu tests report "Skipped" (never "Passed").
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh
ctest --test-dir build --output-on-failure -j "${MOEVAL_JOBS:-$(nproc)}" "$@"
