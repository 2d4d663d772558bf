#!/usr/bin/env bash
# Installs the Debian packages moeval builds against, and h5py for the golden-file check.
# Does nothing (and needs no network) when everything is already present.
set -euo pipefail

# clang + libclang-common-14-dev (libFuzzer and the sanitizer runtimes): the fuzz targets (ci/fuzz.sh).
# chromium + python3-venv: the HTML report page, rendered in a venv and screenshotted (ci/report-html.sh).
# The lint of the shell scripts (ci/lint-shell.sh) runs shellcheck.
packages=(cmake ninja-build g++ libeigen3-dev libgtest-dev libgmock-dev librapidcheck-dev libhdf5-dev
          libcli11-dev nlohmann-json3-dev python3-pip clang libclang-common-14-dev chromium python3-venv
          shellcheck)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "install-deps: the CUDA toolkit (nvcc, cuBLAS) is required and was not found in PATH or /usr/local/cuda" >&2
  exit 1
fi

# h5py for golden_python_check: the system python if it has it, else a venv of our own
# (.venv-golden, which golden/tests/CMakeLists.txt picks up); never a pip install into the system.
if ! python3 -c "import h5py, numpy" >/dev/null 2>&1 && ! .venv-golden/bin/python -c "import h5py, numpy" >/dev/null 2>&1; then
  echo "install-deps: installing h5py and numpy into .venv-golden (pip, in a venv)"
  python3 -m venv .venv-golden
  .venv-golden/bin/python -m pip install -q h5py numpy
fi
