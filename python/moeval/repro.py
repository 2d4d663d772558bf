"""Reproduce files of a failing Python check: one .npz holding the problem, the contract, the
kernel's output and the case's inputs, enough to judge the output again without the kernel.

The case itself is rebuilt from the problem (cases are deterministic from their seed); the stored
inputs are compared with the rebuilt ones, so a file from another moeval version that would judge
against different data says so instead of giving a wrong verdict.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Tuple

import numpy as np

import moeval


def save(directory: str, case: moeval.Case, output_bits: np.ndarray, contract: moeval.Contract) -> str:
    """Writes <directory>/<problem name>-<output hash>.npz (temp file + rename: never half-written);
    returns its path. The hash keeps two different failing outputs of one case apart."""
    os.makedirs(directory, exist_ok=True)
    digest = hashlib.sha1(np.ascontiguousarray(output_bits, dtype=np.uint16).tobytes()).hexdigest()[:10]
    path = os.path.join(directory, f"{case.problem.name}-{digest}.npz")
    inputs = {"a": case.a, "topk_ids": case.topk_ids, "topk_weights": case.topk_weights, "codes": case.codes,
              "scales": case.scales, "g_idx": case.g_idx}
    if case.zeros is not None:
        inputs["zeros"] = case.zeros
    fd, tmp = tempfile.mkstemp(prefix=".repro-", suffix=".npz", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, problem=json.dumps(moeval.problem_fields(case.problem)), contract=contract.name,
                                output=np.asarray(output_bits, dtype=np.uint16), **{"input_" + k: v for k, v in inputs.items()})
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def load(path: str) -> Tuple[moeval.Case, np.ndarray, moeval.Contract]:
    """The case (rebuilt and checked against the stored inputs), the output bits and the contract."""
    try:
        archive = np.load(path, allow_pickle=False)
    except ValueError as e:  # neither .npz nor .npy (numpy then tries pickle, which is refused)
        raise ValueError(f"{path}: is not an .npz archive written by moeval.repro.save (numpy: {e})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError(f"{path}: is a single .npy array, not a repro file (an .npz archive written by moeval.repro.save)")
    with archive as data:
        for key in ("problem", "contract", "output"):
            if key not in data.files:
                raise ValueError(f"{path}: holds no '{key}'; not a repro file written by moeval.repro.save")
        problem = moeval.Problem(**json.loads(str(data["problem"])))
        contract = moeval.Contract.parse(str(data["contract"]))
        output = np.array(data["output"])
        stored = {k[len("input_"):]: np.array(data[k]) for k in data.files if k.startswith("input_")}
    case = moeval.build_case(problem)
    for name, values in stored.items():
        if not np.array_equal(getattr(case, name), values):
            raise ValueError(f"{path}: the stored input '{name}' differs from the one this moeval builds for "
                             f"{problem.name}; the file was written by another version")
    return case, output, contract


def replay(path: str) -> moeval.Verdict:
    """Judges the stored output again."""
    case, output, contract = load(path)
    return moeval.judge(case, output, contract)


def main(argv=None) -> int:
    """python -m moeval.repro FILE...: judges each file's stored output again (exit 1 on a failed
    verdict, 2 where a file could not be read; every file is tried)."""
    import sys

    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print("usage: python -m moeval.repro FILE.npz...", file=sys.stderr)
        return 2
    failed = unreadable = 0
    for path in paths:
        # One bad file (missing, not an .npz, written by another version) is reported and the
        # others are still judged; the exit status says the worst: 2 for a file that could not be
        # read, else 1 for a failed verdict.
        try:
            verdict = replay(path)
        except (OSError, ValueError, TypeError) as e:
            unreadable += 1
            what = str(e) or type(e).__name__
            print(f"{path}: ERROR: {what.removeprefix(path + ': ')}", file=sys.stderr)
            continue
        failed += not verdict.passed
        print(f"{path}: {verdict.summary()}")
    return 2 if unreadable else 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
