#!/usr/bin/env python3
"""One self-contained HTML page for a `moeval check --out DIR` report.

    python3 tools/report/render_report.py DIR [--bench bench.json ...] [--out DIR/report.html]

The page holds plotly's JavaScript inline (no network needed to open it) and shows:
  - the run: version, commit, command, devices, driver and CUDA versions, matrix, shard, times;
  - the status of every check by kernel;
  - the error/bound ratio (max over each check's outputs) by kernel x scheme x dtype: the bounded
    tier's gate is ratio <= 1, so the margin of every cell is visible;
  - for each failing check, its failure pattern: the map of mismatching outputs, the position of
    mismatches inside a 64-wide column tile, and mismatches per expert;
  - `moeval bench` results against the roofline (HBM floor), when --bench files are given;
  - the failing and skipped checks with their reasons.
It reads report.json, or results.jsonl of a run that was killed before writing report.json.
"""
import argparse
import collections
import html
import json
import os
import sys
import tempfile

import plotly.graph_objects as go
from plotly.subplots import make_subplots

SCHEMA_VERSION = 2


def fail(message):
    print(f"render_report: error: {message}", file=sys.stderr)
    sys.exit(2)


def load_report(directory):
    report_json = os.path.join(directory, "report.json")
    lines = os.path.join(directory, "results.jsonl")
    if os.path.exists(report_json):
        with open(report_json) as f:
            try:
                report = json.load(f)
            except json.JSONDecodeError as e:
                fail(f"'{report_json}' is not valid JSON: {e}")
    elif os.path.exists(lines):
        report = {"checks": [], "complete": False, "interrupted": False}
        with open(lines) as f:
            for number, line in enumerate(f, 1):
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the torn last line of a killed run
                kind = entry.pop("type", "")
                if kind == "header":
                    report.update(entry)
                elif kind == "check":
                    report["checks"].append(entry)
                elif kind == "end":
                    report["complete"] = True
                    report["interrupted"] = entry.get("interrupted", False)
                    report["run"]["duration_s"] = entry.get("duration_s")
    else:
        fail(f"'{directory}' holds neither report.json nor results.jsonl")
    if report.get("schema_version") != SCHEMA_VERSION:
        fail(f"'{directory}': schema_version {report.get('schema_version')!r}; this page reads {SCHEMA_VERSION}")
    report["checks"].sort(key=lambda c: c.get("index", 0))
    return report


def scheme_label(params):
    group = params.get("group")
    s = f"{params.get('weight_type')}-{'cw' if group == -1 else 'g' + str(group)}"
    if params.get("act_order"):
        s += "-actorder" + ("" if params.get("is_k_full") else "-kpart")
    return s


def status_figure(checks):
    kernels = sorted({c["kernel"] for c in checks})
    fig = go.Figure()
    colors = {"PASS": "#2e7d32", "FAIL": "#c62828", "SKIPPED": "#9e9e9e"}
    for status in ("PASS", "FAIL", "SKIPPED"):
        counts = [sum(1 for c in checks if c["kernel"] == k and c["status"] == status) for k in kernels]
        fig.add_bar(name=status, x=kernels, y=counts, marker_color=colors[status], text=counts, textposition="auto")
    fig.update_layout(barmode="stack", title="Checks by kernel and status", height=380, yaxis_title="checks")
    return fig


def ratio_figures(checks):
    bounded = [c for c in checks if c.get("tier") == "bounded" and c.get("max_ratio") is not None]
    if not bounded:
        return None
    kernels = sorted({c["kernel"] for c in bounded})
    rows = sorted({(c["kernel"], c["params"]["dtype"]) for c in bounded})
    schemes = sorted({scheme_label(c["params"]) for c in bounded})
    z = [[None] * len(schemes) for _ in rows]
    for c in bounded:
        r = rows.index((c["kernel"], c["params"]["dtype"]))
        s = schemes.index(scheme_label(c["params"]))
        z[r][s] = max(z[r][s] or 0.0, c["max_ratio"])
    heat = go.Figure(go.Heatmap(
        z=z, x=schemes, y=[f"{k} {d}" for k, d in rows], colorscale=[[0, "#e8f5e9"], [0.5, "#fff59d"], [1, "#c62828"]],
        zmin=0, zmax=2, text=[[("" if v is None else f"{v:.2f}") for v in row] for row in z], texttemplate="%{text}",
        colorbar={"title": "max |err|/bound"}))
    heat.update_layout(title="Bounded tier: largest error/bound ratio per kernel x dtype x scheme (gate: <= 1)",
                       height=max(320, 60 + 34 * len(rows)), xaxis_tickangle=-35)
    strip = go.Figure()
    for k in kernels:
        mine = [c for c in bounded if c["kernel"] == k]
        strip.add_trace(go.Box(
            x=[scheme_label(c["params"]) + " " + c["params"]["dtype"] for c in mine], y=[c["max_ratio"] for c in mine],
            name=k, boxpoints="all", jitter=0.4, pointpos=0,
            hovertext=[c["case"] + " (" + c.get("reference", "?") + " reference)" for c in mine]))
    strip.add_hline(y=1.0, line_dash="dash", line_color="#c62828", annotation_text="bound")
    strip.update_layout(title="Every bounded check's ratio by kernel x scheme x dtype", boxmode="group", height=460,
                        yaxis_title="max |err| / bound", xaxis_tickangle=-35)
    return heat, strip


def pattern_figure(check):
    p = check["pattern"]
    experts = p.get("experts")
    fig = make_subplots(rows=1, cols=3 if experts else 2, column_widths=[0.45, 0.3, 0.25] if experts else [0.6, 0.4],
                        subplot_titles=["mismatch map (fraction per cell)", "column within a 64-wide tile"] +
                                       (["mismatches per expert"] if experts else []))
    m = p["map"]
    fig.add_trace(go.Heatmap(z=m["fraction"], colorscale="Reds", zmin=0, zmax=1, showscale=False,
                             x=[i * m["col_step"] for i in range(len(m["fraction"][0]) if m["fraction"] else 0)],
                             y=[i * m["row_step"] for i in range(len(m["fraction"]))]), row=1, col=1)
    fig.update_yaxes(autorange="reversed", title_text="output row", row=1, col=1)
    fig.update_xaxes(title_text="output column", row=1, col=1)
    fig.add_bar(x=list(range(64)), y=p["col_in_tile64"], marker_color="#c62828", showlegend=False, row=1, col=2)
    if experts:
        fig.add_bar(x=list(range(len(experts["counts"]))), y=experts["counts"], marker_color="#6a1b9a", showlegend=False,
                    row=1, col=3)
    title = f"{check['id']}: {check.get('mismatches')} of {check.get('elements')} outputs wrong"
    # The K-group attribution of the worst (expert, column): which group's scale explains the error.
    suspects = (p.get("k_groups") or {}).get("suspects") or []
    if suspects:
        s = suspects[0]
        title += (f"<br><sub>expert {s['expert']}, column {s['column']}: K-group {s['group']} explains "
                  f"{100 * s['explained']:.1f}% of the error (scale x{s['factor']:.4g})</sub>")
    fig.update_layout(title=title, height=410 if suspects else 380, margin={"t": 110} if suspects else None)
    return fig


def bench_figure(bench_files):
    cells = []
    for path in bench_files:
        with open(path) as f:
            data = json.load(f)
        for c in data.get("cells", []):
            c["_device"] = data.get("device", "")
            cells.append(c)
    if not cells:
        return None
    shapes = sorted({c["shape"] for c in cells})
    fig = make_subplots(rows=1, cols=len(shapes), subplot_titles=shapes, shared_yaxes=True)
    series = [("roofline_s", "roofline (HBM floor)", "#000000", "dash"), ("ours_gemm_s", "wna16_moe", "#1565c0", "solid"),
              ("marlin_gemm_s", "marlin_moe", "#ef6c00", "solid"), ("cublas_path_s", "cuBLAS reference path", "#757575", "dot")]
    for i, shape in enumerate(shapes, 1):
        mine = sorted((c for c in cells if c["shape"] == shape), key=lambda c: c["tokens"])
        for key, name, color, dash in series:
            points = [(c["tokens"], c[key] * 1e6) for c in mine if c.get(key)]
            if points:
                fig.add_scatter(x=[p[0] for p in points], y=[p[1] for p in points], name=name, legendgroup=name,
                                showlegend=i == 1, line={"color": color, "dash": dash}, mode="lines+markers", row=1, col=i)
        fig.update_xaxes(type="log", title_text="tokens M", row=1, col=i)
    fig.update_yaxes(type="log", title_text="time per GEMM (us)", row=1, col=1)
    devices = sorted({c["_device"] for c in cells})
    fig.update_layout(title="moeval bench against the roofline (" + ", ".join(devices) + ")", height=420)
    return fig


def run_table(report):
    run = report.get("run", {})
    s = report.get("summary") or {}
    devices = ", ".join(f"{d.get('index')}: {d.get('name')}" for d in run.get("devices", [])) or "none"
    shard = run.get("shard", {})
    rows = [
        ("moeval", f"{report.get('moeval', {}).get('version')} (commit {str(report.get('moeval', {}).get('commit'))[:12]})"),
        ("command", run.get("command")), ("matrix", run.get("matrix")),
        ("filters", " ".join(run.get("filters", [])) or "none"), ("seeds", run.get("seeds")),
        ("shard", f"{shard.get('index')}/{shard.get('count')}"), ("devices", devices),
        ("driver / CUDA runtime", f"{run.get('driver_version') or 'no driver'} / {run.get('cuda_runtime_version')}"),
        ("contract", run.get("contract")),
        ("judged by", ", ".join(f"{ref}: {n}" for ref, n in sorted(
            collections.Counter(c.get("reference") for c in report.get("checks", [])).items())) or "no check"),
        ("started", run.get("start_time")),
        ("duration", f"{run.get('duration_s'):.1f} s" if isinstance(run.get("duration_s"), (int, float)) else "unfinished"),
        ("result", f"{s.get('passed', 0)} passed, {s.get('failed', 0)} failed, {s.get('skipped', 0)} skipped, "
                   f"{s.get('not_run', 0)} not run" + (" (interrupted)" if report.get("interrupted") else "")),
    ]
    return "<table class='run'>" + "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>" for k, v in rows) + "</table>"


def checks_table(checks, status, limit=200):
    chosen = [c for c in checks if c["status"] == status]
    if not chosen:
        return "<p>None.</p>"
    body = "".join(
        f"<tr><td>{c['index']}</td><td>{html.escape(c['id'])}</td><td>{html.escape(c.get('reference') or '')}</td>"
        f"<td>{'' if c.get('device') is None else c['device']}</td>"
        f"<td><pre>{html.escape(c.get('reason') or '')}</pre></td></tr>" for c in chosen[:limit])
    more = f"<p>... and {len(chosen) - limit} more (report.json has them all).</p>" if len(chosen) > limit else ""
    return ("<table class='checks'><tr><th>#</th><th>check</th><th>reference</th><th>device</th><th>reason</th></tr>" + body +
            "</table>" + more)


def render(report, bench_files):
    checks = report["checks"]
    parts = []
    first = True

    def figure(fig):
        nonlocal first
        parts.append(fig.to_html(full_html=False, include_plotlyjs=first, config={"displaylogo": False}))
        first = False

    parts.append("<h2>Run</h2>" + run_table(report))
    parts.append("<h2>Status</h2>")
    figure(status_figure(checks))
    parts.append("<h2>Error against the bound</h2>")
    ratios = ratio_figures(checks)
    if ratios:
        for f in ratios:
            figure(f)
    else:
        parts.append("<p>No bounded-tier GPU check ran (no device, or none selected).</p>")
    parts.append("<h2>Failure patterns</h2>")
    failing = [c for c in checks if c["status"] == "FAIL" and c.get("pattern")]
    if failing:
        for c in failing[:8]:
            figure(pattern_figure(c))
    else:
        parts.append("<p>No failing GEMM check, so no pattern to show.</p>")
    if bench_files:
        parts.append("<h2>Benchmark</h2>")
        fig = bench_figure(bench_files)
        if fig:
            figure(fig)
    parts.append("<h2>Failing checks</h2>" + checks_table(checks, "FAIL"))
    parts.append("<h2>Skipped checks</h2>" + checks_table(checks, "SKIPPED"))
    if first:  # no figure at all: still a self-contained page
        parts.insert(0, "")
    title = f"moeval report: {report.get('run', {}).get('matrix')} matrix"
    style = ("body{font-family:sans-serif;margin:24px;max-width:1400px} table{border-collapse:collapse} "
             "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top} "
             "pre{margin:0;white-space:pre-wrap;font-size:12px} table.run th{background:#f5f5f5}")
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body><h1>{html.escape(title)}</h1>" + "\n".join(parts) + "</body></html>\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report_dir", help="a directory written by `moeval check --out` (or `moeval report merge`)")
    parser.add_argument("--bench", action="append", default=[], help="a `moeval bench --json` file (repeatable)")
    parser.add_argument("--out", help="the HTML file (default: REPORT_DIR/report.html)")
    args = parser.parse_args()
    report = load_report(args.report_dir)
    for b in args.bench:
        if not os.path.exists(b):
            fail(f"--bench '{b}' does not exist")
    page = render(report, args.bench)
    out = args.out or os.path.join(args.report_dir, "report.html")
    # Whole or not at all: a temp file beside the target, then rename.
    fd, temp = tempfile.mkstemp(prefix=os.path.basename(out) + ".tmp.", dir=os.path.dirname(os.path.abspath(out)))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(page)
        os.chmod(temp, 0o644)  # mkstemp's 0600 would keep the page from a web server or a colleague
        os.replace(temp, out)
    except BaseException:
        os.unlink(temp)
        raise
    print(f"render_report: {out} ({len(page) // 1024} KiB, {len(report['checks'])} checks)")


if __name__ == "__main__":
    main()
