#!/usr/bin/env bash
# Runs shellcheck over every tracked shell script of the repository (warnings and errors fail). Most
# of ci/ runs only on the device machine, which CI never reaches: this, ci/test-device-ab.sh and
# ci/test-device-sweep.sh are the checks CI gives those scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t scripts < <(git ls-files --cached --others --exclude-standard '*.sh' .ci/run)  # untracked ones too, here
if ! command -v shellcheck > /dev/null; then
  echo "lint-shell: shellcheck is not installed (Debian package shellcheck; ci/install-deps.sh installs it)" >&2
  exit 1
fi
shellcheck -x -S warning "${scripts[@]}"
echo "lint-shell: ${#scripts[@]} scripts, no warning"
