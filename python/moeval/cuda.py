"""The CUDA build of moeval (MOEVAL_PY_CUDA=ON): run a Python kernel over a matrix the way
`moeval check` runs ours, and our own kernels on torch tensors.

A Python kernel is a callable ``kernel_fn(inputs, out, info)``: `inputs` maps names to torch CUDA
tensors that view guarded device buffers ("a", the layout's arrays such as "qweight", "scales",
"qzeros", and the routing: "topk_ids", "topk_weights", "sorted_token_ids", "expert_ids",
"num_tokens_post_padded", "expert_map" with an expert-parallel map), `out` is the [M*topk, N]
output to write (NaN-poisoned before each call), and `info` holds the shape and scheme ("n", "k",
"top_k", "mul_topk_weights", "num_experts", "block_size", "num_slots", "dtype", "problem", the
layout's "attrs"). The tensors are valid during the call only, and inputs must not be written.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Iterable, List, Optional, Union

import moeval
from . import _moeval

if not _moeval.has_cuda:
    # Without this the first missing name below surfaced as a bare AttributeError.
    raise ImportError("moeval.cuda: this moeval was built without CUDA (a CPU-only build); rebuild it with CUDA, "
                      "`MOEVAL_PY_CUDA=ON pip install .` with nvcc on PATH (docs/external-kernels.md)")

GuardedBuffer = _moeval.GuardedBuffer
CaseResult = _moeval.CaseResult
cublas_reference = _moeval.cublas_reference


def devices() -> int:
    """How many CUDA devices this process can use (0 without a driver or device)."""
    return _moeval.device_count()


def wna16_kernel(inputs, out, info) -> None:
    """Our WNA16 MoE GEMM as a Python kernel (check(..., layout="wna16"))."""
    attrs = info["attrs"]
    _moeval.wna16_moe(inputs["a"], out, inputs["qweight"], inputs["scales"], inputs.get("qzeros"),
                      inputs["sorted_token_ids"], inputs["expert_ids"], inputs["num_tokens_post_padded"],
                      inputs["topk_weights"], num_experts=info["num_experts"], bits=attrs["bits"],
                      group_size=attrs["group_size"], n=info["n"], k=info["k"], top_k=info["top_k"], dtype=info["dtype"],
                      block_size=info["block_size"], num_slots=info["num_slots"], mul_topk_weights=info["mul_topk_weights"])


def marlin_kernel(inputs, out, info) -> None:
    """Our Marlin MoE GEMM as a Python kernel (check(..., layout="marlin"))."""
    import torch

    problem = info["problem"]
    workspace_bytes = _moeval.marlin_moe_workspace_bytes(info["num_slots"], info["n"], info["k"], problem.act_order,
                                                         problem.is_k_full, info["block_size"])
    workspace = torch.empty(workspace_bytes, dtype=torch.uint8, device=out.device) if workspace_bytes else None
    _moeval.marlin_moe(inputs["a"], out, inputs["qweight"], inputs["scales"], inputs.get("zeros"), inputs.get("g_idx"),
                       inputs.get("perm"), inputs["sorted_token_ids"], inputs["expert_ids"],
                       inputs["num_tokens_post_padded"], inputs["topk_weights"], workspace,
                       num_experts=info["num_experts"], weight_type=problem.weight_type, group_size=problem.group_size,
                       num_groups=inputs["scales"].shape[1], act_order=problem.act_order, is_k_full=problem.is_k_full,
                       n=info["n"], k=info["k"], top_k=info["top_k"], dtype=info["dtype"], block_size=info["block_size"],
                       num_slots=info["num_slots"], mul_topk_weights=info["mul_topk_weights"])


def supports(kernel: str) -> Callable[[moeval.Problem], str]:
    """Our kernel's own declaration of what it runs, as check()'s `supports` (e.g. Marlin's shape limits)."""
    return lambda problem: _moeval.builtin_unsupported_reason(kernel, problem)


# name -> (the kernel as a Python kernel, its layout, its supports)
kernels = {"wna16_moe": (wna16_kernel, "wna16", supports("wna16_moe")),
           "marlin_moe": (marlin_kernel, "marlin", supports("marlin_moe"))}


def run_builtin(kernel: str, problem: moeval.Problem, device: int = 0) -> Union[CaseResult, str]:
    """Our kernel through the C++ testbed: a CaseResult, or "unsupported: <reason>"."""
    return _moeval.run_builtin(kernel, problem, device)


@dataclass
class CheckReport:
    """What check() ran: one row per (device, case), as `moeval check` prints and reports them."""

    rows: List[dict] = field(default_factory=list)  # {"check", "status" (PASS/FAIL/SKIPPED), "detail"}
    results: List[CaseResult] = field(default_factory=list)
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.passed > 0

    @property
    def lines(self) -> List[str]:
        return [f"{r['status']:<8} {r['check']}" + (f"  {r['detail']}" if r["detail"] else "") for r in self.rows]

    def record(self, what: str, status: str, detail: str = "", echo: bool = True) -> None:
        self.rows.append({"check": what, "status": status, "detail": detail})
        if status == "PASS":
            self.passed += 1
        elif status == "FAIL":
            self.failed += 1
        else:
            self.skipped += 1
        if echo:
            print(self.lines[-1], flush=True)

    def json(self) -> dict:
        """The shape of `moeval check --json`: counts and one entry per check."""
        return {"passed": self.passed, "failed": self.failed, "skipped": self.skipped, "checks": self.rows}

    def write_json(self, path: str) -> None:
        """Writes json() to `path` through a temp file and a rename (never half-written)."""
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".moeval-check-", suffix=".json", dir=directory)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(self.json(), f, indent=1)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def __str__(self) -> str:
        return "\n".join(self.lines + [f"check: {self.passed} passed, {self.failed} failed, {self.skipped} skipped"])


def check(kernel_fn: Callable, matrix: Union[str, Iterable[moeval.Problem]] = "smoke", devices: Optional[List[int]] = None,
          *, layout: str = "wna16", contract: moeval.ContractLike = None, block_size: int = 0,
          name: str = "python_kernel", supports: Optional[Callable] = None, echo: bool = True,
          json_path: Optional[str] = None) -> CheckReport:
    """Runs `kernel_fn` over a matrix on each device with the testbed's checks: run twice into a
    poisoned output (bitwise determinism unless the contract only reports it), guard canaries and
    unchanged inputs, another device current than the data's whenever two exist, the CPU
    reference and bound under `contract`. `supports(problem) -> str` may decline cases ("" = run).
    A kernel that raises fails that case. `json_path` also writes the report as `moeval check
    --json` does. Raises RuntimeError when there is no device at all."""
    problems = moeval.matrix(matrix) if isinstance(matrix, str) else list(matrix)
    count = _moeval.device_count()
    if count == 0:
        raise RuntimeError("moeval.cuda.check: " + _moeval.no_device_reason())
    targets = list(range(count)) if devices is None else list(devices)
    for d in targets:
        if not 0 <= d < count:
            raise ValueError(f"moeval.cuda.check: device {d} does not exist; allowed: 0..{count - 1}")
    wanted = moeval.as_contract(contract)
    report = CheckReport()
    if echo:
        print(f"contract {name}: {wanted.name}", flush=True)
    for d in targets:
        for p in problems:
            what = f"gpu{d} {name} {p.name}"
            try:
                result = _moeval.run_python(kernel_fn, p, d, layout, wanted, block_size, name, supports)
            except Exception as e:  # the kernel raised: a failure of this case, as `moeval check` records it
                report.record(what, "FAIL", f"error: {type(e).__name__}: {e}", echo)
                continue
            if isinstance(result, str):
                report.record(what, "SKIPPED", result, echo)
                continue
            report.results.append(result)
            report.record(what, "PASS" if result.passed else "FAIL", "" if result.passed else result.summary(), echo)
    if echo:
        print(f"check: {report.passed} passed, {report.failed} failed, {report.skipped} skipped")
    if json_path:
        report.write_json(json_path)
    return report
