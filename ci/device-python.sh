#!/usr/bin/env bash
# The Python package on the device machine, in ONE call (from the repository root, carrying .deps):
#   here:   bash ci/device-python.sh stage      # copies Eigen's headers into .deps/eigen3 (git-ignored)
#   there:  bash ci/device-python.sh            # kind nvidia-h200 (or -x2 for the two-device test), carry .deps
# There it builds the package with CUDA (MOEVAL_PY_CUDA=ON, sm_90, all cores) in a venv that sees
# the machine's torch, nanobind, scikit-build-core and pytest (no network), then runs the CPU suite
# and the GPU suite (python/tests_gpu) and writes python-gpu.log and python-junit.xml under $OUT.
# Exit status: pytest's, and 1 when the GPU suite ran nothing (every test skipped: a run that
# proved nothing), when nanobind reports instances leaked at exit, or when the build fails.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "stage" ]]; then
  mkdir -p .deps
  rm -rf .deps/eigen3 .deps/wheels
  cp -r /usr/include/eigen3 .deps/eigen3
  # numpy for the device's python 3.12, in case its torch came without it (the device has no network).
  python3 -m pip download -q --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
    --platform manylinux_2_28_x86_64 -d .deps/wheels "numpy>=1.26"
  echo "staged .deps ($(du -sh .deps | cut -f1)): Eigen headers and $(ls .deps/wheels); carry .deps"
  exit 0
fi

out="${OUT:-/tmp/moeval-python-out}"
mkdir -p "$out"
log="$out/python-gpu.log"
eigen="$PWD/.deps/eigen3"
[[ -d "$eigen" ]] || { echo "device-python: $eigen is missing: run 'bash ci/device-python.sh stage' here and carry .deps" >&2; exit 2; }
export PATH="/usr/local/cuda/bin:$PATH"

venv=/tmp/moeval-python-venv
# The machine's python3 is itself a venv (/opt/torch/.venv): --system-site-packages would expose the
# base interpreter's packages, not torch's, so the new venv gets the parent's site-packages by a .pth.
parent_site=$(python3 -c 'import site; print("\n".join(site.getsitepackages()))')
python3 -m venv --system-site-packages "$venv"
venv_site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n' "$parent_site" > "$venv_site/parent-site-packages.pth"
# shellcheck disable=SC1091
source "$venv/bin/activate"
python -c "import numpy" 2>/dev/null || pip install -q --no-index --find-links .deps/wheels numpy
python -c "import torch, nanobind, scikit_build_core, pytest, numpy; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'devices', torch.cuda.device_count())" | tee "$log"

start=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)
export MOEVAL_PY_CUDA=ON CMAKE_BUILD_PARALLEL_LEVEL
if ! pip install --no-build-isolation --no-deps -v . \
      -Ccmake.define.MOEVAL_EIGEN_INCLUDE_DIR="$eigen" -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90 \
      >"$out/python-build.log" 2>&1; then
  tail -60 "$out/python-build.log"
  echo "device-python: the CUDA build of the package failed (python-build.log)" | tee -a "$log"
  exit 1
fi
echo "package build: $(( $(date +%s) - start )) s" | tee -a "$log"
python -c "import moeval; print('moeval', moeval.__version__, 'has_cuda', moeval.has_cuda)" | tee -a "$log"

set +e
python -m pytest python/tests python/tests_gpu -rs -v --junitxml="$out/python-junit.xml" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
set -e
ran=$(python - "$out/python-junit.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
print(sum(1 for c in cases if "tests_gpu" in c.get("classname", "") and c.find("skipped") is None))
PY
)
echo "GPU tests that ran (not skipped): $ran" | tee -a "$log"
if ! bash ci/nanobind-leaks.sh "$log" 2>&1 | tee -a "$log"; then status=1; fi  # pipefail: the check's status
if [[ "$ran" == "0" ]]; then
  echo "device-python: every GPU test was skipped: nothing was proven" | tee -a "$log"
  exit 1
fi
exit "$status"
