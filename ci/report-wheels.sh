#!/usr/bin/env bash
# Here: downloads the wheels of tools/report/requirements.txt into .stage/wheels, so that a device
# machine without network access can render the HTML page (ci/device-sweep.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip download -q --only-binary=:all: -d .stage/wheels -r tools/report/requirements.txt
echo "report wheels: $(find .stage/wheels -type f | wc -l) files, $(du -sh .stage/wheels | cut -f1) in .stage/wheels"
