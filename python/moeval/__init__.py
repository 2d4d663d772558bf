"""moeval: check a quantized MoE GEMM kernel against moeval's references, from Python.

A case is built deterministically from a Problem; its inputs are numpy arrays that view the C++
memory (16-bit floats as raw uint16 bits beside their dtype name, since numpy has no bfloat16).
A kernel's output is judged by the same comparator `moeval check` uses, under the numerics
contract the kernel declares::

    import moeval
    case = moeval.build_case(moeval.Problem(kind="gemm2", weight_type="uint4", group_size=32))
    out = my_kernel(case)                      # [M*topk, N], torch or numpy, fp16/bf16
    verdict = moeval.judge(case, out)          # or moeval.testing.assert_moe_close(out, case)
"""

from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np

from ._moeval import (  # noqa: F401  (re-exported)
    Case,
    Contract,
    Element,
    Layout,
    Problem,
    Reference,
    Verdict,
    build_case,
    compare,
    decode,
    encode,
    has_cuda,
    matrix,
    matrix_names,
)
from . import _moeval

if has_cuda:  # the CUDA build: device buffers, our kernels, the cuBLAS reference, check()
    from .cuda import check, devices, kernels  # noqa: F401

__version__ = "0.1.0"

LAYOUTS = ("wna16", "marlin", "gptq", "awq", "compressed_tensors")

ContractLike = Union[Contract, str, None]


def as_contract(value: ContractLike = None) -> Contract:
    """A Contract from a Contract, its name ("routing_weight=after_output_rounding ...") or None (ours)."""
    if value is None:
        return Contract()
    if isinstance(value, Contract):
        return value
    if isinstance(value, str):
        return Contract.parse(value)
    raise TypeError(f"contract must be a moeval.Contract, its name as a str, or None; got {type(value).__name__}")


def reference(case: Case, contract: ContractLike = None) -> Reference:
    """The CPU (fp64) reference of `case` under a numerics contract (default: ours)."""
    return _moeval.reference(case, as_contract(contract))


def _dtype_name(dtype: Any, function: str) -> str:
    """'fp16' or 'bf16' for `dtype` or one of its aliases (float16, half, bfloat16, ...: the names
    Problem, encode and decode accept, read by the same C++ parser); `function` names the caller
    in the error."""
    if not isinstance(dtype, str):
        raise TypeError(f"{function}: dtype must be a str, 'fp16' or 'bf16'; got {type(dtype).__name__}")
    try:
        return _moeval.dtype_name(dtype)
    except ValueError:
        raise ValueError(f"{function}: dtype {dtype!r} is not one of fp16, bf16 (or an alias such as float16, "
                         "bfloat16)") from None


def _torch_bits(tensor: Any, dtype: str) -> np.ndarray:
    import torch  # only reached with a torch tensor in hand

    dtype = _dtype_name(dtype, "to_bits")  # an alias was a KeyError below
    want = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    if tensor.dtype != want:
        raise TypeError(f"the output is a torch {tensor.dtype} tensor; the case's dtype is {dtype} ({want})")
    return tensor.detach().contiguous().cpu().view(torch.int16).numpy().view(np.uint16)


def to_bits(output: Any, dtype: str) -> np.ndarray:
    """A kernel output as a C-contiguous uint16 array of `dtype` bits.

    Accepts a torch fp16/bf16 tensor (any device), a numpy float16 array (fp16 only), a numpy
    uint16 array (already bits) or a float32/float64 array (rounded once to `dtype`, to nearest even).
    `dtype` is 'fp16' or 'bf16' or an alias that Problem accepts ('float16', 'half', 'bfloat16').
    """
    # Read once, before any branch: the float16 branch compared with the literal "fp16" (refusing
    # 'float16' as unlike float16) and the uint16 branch never looked at the name at all.
    dtype = _dtype_name(dtype, "to_bits")
    if type(output).__module__.startswith("torch"):
        return np.ascontiguousarray(_torch_bits(output, dtype))
    array = np.asarray(output)
    if array.dtype == np.uint16:
        return np.ascontiguousarray(array)
    if array.dtype == np.float16:
        if dtype != "fp16":
            raise TypeError(f"the output is float16 but the case's dtype is {dtype}")
        return np.ascontiguousarray(array).view(np.uint16)
    if array.dtype in (np.float32, np.float64):
        return encode(np.ascontiguousarray(array, dtype=np.float64), dtype)
    raise TypeError(f"cannot read a kernel output of numpy dtype {array.dtype}; give fp16/bf16 bits (uint16), "
                    "float16, float32/float64, or a torch fp16/bf16 tensor")


def judge(case: Case, output: Any, contract: ContractLike = None, reference: Optional[Reference] = None) -> Verdict:
    """Judge a kernel's output for `case` under a numerics contract: the Verdict of `moeval check`.

    `output` is [M*topk, N] (see to_bits for the accepted types). `reference` may be passed when
    it was computed already (it must be for this case's problem and under the same contract).
    """
    wanted = as_contract(contract)
    if reference is None:
        ref = _moeval.reference(case, wanted)  # this case's by construction: nothing to check
    else:
        check_reference(reference, case)
        ref = reference
    if ref.contract != wanted:
        raise ValueError(f"the reference was computed under '{ref.contract.name}', not under '{wanted.name}'")
    # _compare is compare() with messages that name judge, the function called here.
    return _moeval._compare(ref, to_bits(output, case.dtype), case.problem.tier, "judge")


def check_reference(ref: Reference, case: Case) -> None:
    """Raise ValueError unless `ref` was computed for `case`'s problem: another case's reference
    would judge this output against the wrong values (and could pass it). The tier is not part of
    it, since it changes only how a reference is compared, not its values."""
    if not isinstance(ref, Reference):
        raise TypeError(f"reference must be a moeval.Reference (moeval.reference(case)); got {type(ref).__name__}")
    # Problem equality (every field; a NaN zipf_exponent equals a NaN one, where comparing
    # problem_fields() dicts found nan != nan and refused a case's own reference). Both are copies.
    have, want = ref.problem, case.problem
    have.tier = want.tier
    if have != want:
        raise ValueError(f"the reference passed as reference= was computed for {ref.problem.name}, not for this case "
                         f"({case.problem.name}); pass moeval.reference(case) of this case")


def as_torch(bits: np.ndarray, dtype: str, device: Any = None):
    """A torch fp16/bf16 tensor with the same bits (copied to `device`). On the CPU it shares the
    array's memory where the array is writable; a read-only array (a kernel result's output, say) is
    copied, since a torch tensor is always writable and writing through one that shares read-only
    memory is undefined."""
    dtype = _dtype_name(dtype, "as_torch")  # the aliases to_bits and Problem accept, too
    array = np.asarray(bits)
    if array.dtype != np.uint16:
        # Any other element type would be reinterpreted as 16-bit words: a float32 array of n values
        # would come back as 2n meaningless halves.
        raise TypeError(f"as_torch: bits must be a uint16 array of {dtype} bit patterns (a case's arrays, "
                        f"a result's output); got {array.dtype}")
    import torch

    if not array.flags.writeable:
        array = array.copy()
    tensor = torch.from_numpy(array.view(np.int16)).view({"fp16": torch.float16, "bf16": torch.bfloat16}[dtype])
    return tensor if device is None else tensor.to(device)


def problem_fields(problem: Problem) -> dict:
    """Every field of a Problem, as keyword arguments of Problem(...) (JSON-friendly)."""
    return {name: (list(getattr(problem, name)) if name == "expert_map" else getattr(problem, name)) for name in _FIELDS}


_FIELDS = ("kind", "experts", "tokens", "topk", "hidden", "inter", "weight_type", "group_size", "act_order",
           "is_k_full", "dtype", "routing", "renormalize", "zipf_exponent", "empty_experts", "expert_map", "tier",
           "seed", "k_shards", "k_shard_rank")
