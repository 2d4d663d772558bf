#!/usr/bin/env bash
# Fails (exit 1, one line naming the log) where a pytest log holds nanobind's exit-time report of
# bound objects still alive ("nanobind: leaked N instances|types|functions"): a reference that the
# bindings or the tests never dropped. Used by ci/package.sh (CI) and ci/device-python.sh.
#   bash ci/nanobind-leaks.sh LOG
set -euo pipefail
log=${1:?usage: ci/nanobind-leaks.sh LOG}
if grep -qE '^nanobind: leaked [0-9]+ (instances|types|functions)' "$log"; then
  echo "nanobind reported leaked objects at exit ($log)" >&2
  exit 1
fi
