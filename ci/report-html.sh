#!/usr/bin/env bash
# The HTML report page, rendered and looked at in a real browser. With a report directory argument,
# renders a copy of that report in build/report-page; without one, first makes a CPU-only one (the quick matrix with --cpu-only:
# golden families run, GPU jobs SKIPPED) in build/report-html. The page gets the newest committed
# bench results (docs/results/bench-*.json) for the roofline plot. Then headless Chromium loads the page:
# the DOM after scripts ran must hold plotly's drawn plots, and the screenshot (report.png beside
# report.html) must not be blank (tools/report/check_screenshot.py).
# Python packages come from a venv (build/report-venv); MOEVAL_REPORT_WHEELS=DIR installs offline.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
venv=build/report-venv
if [[ ! -x $venv/bin/python ]]; then python3 -m venv "$venv"; fi
if ! "$venv/bin/python" -c "import plotly" 2>/dev/null; then
  if [[ -n "${MOEVAL_REPORT_WHEELS:-}" ]]; then
    "$venv/bin/pip" install -q --no-index --find-links "$MOEVAL_REPORT_WHEELS" -r tools/report/requirements.txt
  else
    "$venv/bin/pip" install -q -r tools/report/requirements.txt
  fi
fi
if [[ $# -ge 1 ]]; then
  # A copy: the report may be read-only (files fetched from the device machine).
  report=build/report-page
  rm -rf "$report" && cp -r "$1" "$report" && chmod -R u+w "$report"
else
  report=build/report-html
  rm -rf "$report"
  build/tools/moeval/moeval check --cpu-only --matrix quick --out "$report" > "$report.log" 2>&1 ||
    { cat "$report.log"; exit 1; }
fi
# The newest by the date in the name, then the run letter: a day's first run has none (it sorts as
# "a"), later ones -b, -c, … (a plain sort put bench-…-12-04.json after bench-…-12-04-b.json).
bench=$(for f in docs/results/bench-*.json; do
          if [[ $(basename "$f" .json) =~ ([0-9]{4}-[0-9]{2}-[0-9]{2})(-([a-z]))?$ ]]; then
            echo "${BASH_REMATCH[1]}-${BASH_REMATCH[3]:-a} $f"
          fi
        done | sort | tail -n 1 | cut -d' ' -f2)
[[ -n "$bench" ]] || { echo "report-html: no docs/results/bench-<date>[-<letter>].json" >&2; exit 1; }
"$venv/bin/python" tools/report/render_report.py "$report" --bench "$bench"
page="file://$(cd "$report" && pwd)/report.html"
browser=$(command -v chromium || command -v chromium-browser)
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=10000)
# Plotly draws each figure as an SVG of class main-svg once its script ran.
plots=$("$browser" "${flags[@]}" --dump-dom "$page" 2>/dev/null | grep -o 'class="main-svg"' | wc -l)
echo "report-html: $plots plot surfaces drawn in the page"
if (( plots < 2 )); then echo "report-html: FAILED: the page's plots were not drawn" >&2; exit 1; fi
"$browser" "${flags[@]}" --window-size=1400,2400 --screenshot="$report/report.png" "$page" 2>/dev/null
"$venv/bin/python" tools/report/check_screenshot.py "$report/report.png"
echo "report-html: $report/report.html and report.png in $(( $(date +%s) - start )) s"
