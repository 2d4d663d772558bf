"""A MoE GEMM written in numpy the way a GPU kernel under moeval's contract computes it:
W16 = fl16((u - z)*s) (exact in fp32, one rounding), fp32 matmul, the routing weight multiplied
in fp32, one rounding to 16 bits. The knobs inject the bugs the test suite must catch."""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

import moeval


def dequantize(case: moeval.Case, scale_off: Optional[Tuple[int, int, int]] = None) -> np.ndarray:
    """[E_local, K, N] float32 weights; scale_off = (expert, group, column) takes that scale from column + 1."""
    scales = case.scales.copy()
    if scale_off is not None:
        e, g, c = scale_off
        scales[e, g, c] = scales[e, g, c + 1]
    s = moeval.decode(scales, case.dtype).astype(np.float32)                       # [E, G, N]
    zeros = case.zeros.astype(np.float32) if case.zeros is not None else np.float32(
        {"uint4b8": 8, "uint8b128": 128}[case.problem.weight_type])
    g_idx = case.g_idx                                                             # [E, K]
    s_rows = np.take_along_axis(s, g_idx[:, :, None].astype(np.int64), axis=1)     # [E, K, N]
    z_rows = zeros if np.ndim(zeros) == 0 else np.take_along_axis(zeros, g_idx[:, :, None].astype(np.int64), axis=1)
    exact = (case.codes.astype(np.float32) - z_rows) * s_rows                      # exact in fp32
    return moeval.decode(moeval.encode(exact.astype(np.float64), case.dtype), case.dtype).astype(np.float32)


def run(case: moeval.Case, *, scale_off=None, swap_rows: Optional[Tuple[int, int]] = None,
        round_before_weight: bool = False) -> np.ndarray:
    """The kernel's output [M*topk, N] as uint16 bits."""
    w = dequantize(case, scale_off)
    a = moeval.decode(case.a, case.dtype).astype(np.float32)
    ids = case.topk_ids.reshape(-1)
    weights = case.topk_weights.reshape(-1)
    emap = case.expert_map
    rows, n = case.output_shape
    out = np.zeros((rows, n), dtype=np.float32)
    for t in range(rows):
        e = int(ids[t]) if emap is None else int(emap[ids[t]])
        if e < 0:
            continue
        acc = a[t // case.a_row_divisor] @ w[e]                                    # fp32 accumulation
        if case.mul_topk_weights and round_before_weight:
            acc = moeval.decode(moeval.encode(acc.astype(np.float64), case.dtype), case.dtype).astype(np.float32)
        if case.mul_topk_weights:
            acc = acc * np.float32(weights[t])
        out[t] = acc
    bits = moeval.encode(out.astype(np.float64), case.dtype)
    if swap_rows is not None:
        i, j = swap_rows
        bits[[i, j]] = bits[[j, i]]
    return bits
