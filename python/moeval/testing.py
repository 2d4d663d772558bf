"""Assertions for kernel tests: assert_moe_close(out, case) fails with the worst element, its
bound, the pattern of the mismatches and the path of a reproduce file."""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

import moeval
from moeval import repro


def _listed(values, limit: int = 8) -> str:
    shown = ", ".join(str(int(v)) for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}]"


def describe_pattern(mask: np.ndarray, expert_of_row: Optional[np.ndarray] = None) -> str:
    """Where the violations are, in words: one element, one column, whole rows, rows of one expert, or scattered."""
    count = int(mask.sum())
    if count == 0:
        return "no element outside its bound (the failure is elsewhere: determinism, canaries or NaN)"
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    full_rows = np.flatnonzero(mask.all(axis=1))
    if count == 1:
        text = f"a single element, ({rows[0]}, {cols[0]})"
    elif len(cols) == 1:
        text = f"confined to column {cols[0]}, in {len(rows)} rows {_listed(rows)}"
    elif len(rows) == 1:
        text = f"confined to row {rows[0]}, {len(cols)} columns {_listed(cols)}"
    elif len(full_rows) == len(rows):
        text = f"whole rows: {len(rows)} rows entirely outside the bound {_listed(rows)} (dropped, swapped or misrouted rows?)"
    else:
        text = f"scattered over {len(rows)} rows {_listed(rows)} x {len(cols)} columns {_listed(cols)}"
    if expert_of_row is not None and len(rows) > 0:
        experts, hits = np.unique(expert_of_row[rows], return_counts=True)
        text += "; rows by expert " + ", ".join(f"{int(e)}: {int(n)}" for e, n in zip(experts[:8], hits[:8]))
        if len(experts) > 8:
            text += ", ..."
    return text


def assert_moe_close(out: Any, case: moeval.Case, contract: moeval.ContractLike = None, *,
                     reference: Optional[moeval.Reference] = None, repro_dir: Optional[str] = None) -> moeval.Verdict:
    """Asserts that a kernel's output for `case` passes moeval's comparator under `contract`.

    Returns the Verdict when it passes. Otherwise writes a reproduce file (into `repro_dir`, the
    environment's MOEVAL_REPRO_DIR, or ./moeval-repro) and raises AssertionError naming the worst
    element, its bound and ratio, the count, fraction and pattern of the violations, and the file.
    """
    wanted = moeval.as_contract(contract)
    ref = reference if reference is not None else moeval.reference(case, wanted)
    bits = moeval.to_bits(out, case.dtype)
    verdict = moeval.judge(case, bits, wanted, reference=ref)
    if verdict.passed:
        return verdict
    tier = case.problem.tier
    mask = ref.ratios(bits, tier) > 1.0
    directory = repro_dir or os.environ.get("MOEVAL_REPRO_DIR") or "moeval-repro"
    path = repro.save(directory, case, bits, wanted)
    lines = [f"moeval: {case.problem.name} fails under contract '{wanted.name}'", f"  {verdict.summary()}"]
    worst = verdict.worst
    if worst is not None:
        expert = int(case.topk_ids.reshape(-1)[worst.row])
        error = abs(worst.value - worst.reference)
        if tier == "exact":
            lines.append(f"  worst element ({worst.row}, {worst.col}) of expert {expert}: got {worst.value:.9g} "
                         f"(bits 0x{worst.value_bits:04x}), want exactly {worst.reference_rounded:.9g} "
                         f"(bits 0x{worst.reference_bits:04x}); the exact tier allows no error")
        else:
            lines.append(f"  worst element ({worst.row}, {worst.col}) of expert {expert}: got {worst.value:.9g}, "
                         f"want {worst.reference:.9g}, |error| {error:.3g} > bound {worst.bound:.3g} (ratio {worst.ratio:.3g})")
    total = verdict.rows * verdict.cols
    lines.append(f"  mismatches: {verdict.violations} of {total} elements ({verdict.mismatch_fraction:.3%})")
    lines.append("  pattern: " + describe_pattern(mask, case.topk_ids.reshape(-1)))
    if tier == "bounded" and 1.0 < verdict.max_ratio < 3.0 and verdict.violations > 1:
        # One extra rounding costs up to about one more u_out·|y|: ratios just above 1 everywhere.
        lines.append("  hint: every ratio is below 3 — a rounding at another point than the contract declares "
                     "(routing weight after a 16-bit rounding? another dequant recipe?) looks like this")
    lines.append(f"  reproduce: python -m moeval.repro {path}")
    raise AssertionError("\n".join(lines))
