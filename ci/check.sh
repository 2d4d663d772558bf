#!/usr/bin/env bash
# The main job of README.md: build whatever is missing, then run `moeval check` on its default matrix.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh >&2
exec build/tools/moeval/moeval check "$@"
