#!/usr/bin/env python3
"""check_golden.py must fail, naming the case and the rule, on copies of the corpus that each break
one rule it claims to check: a GEMM1 case's row divisor, a GEMM2 case's routing-weight flag,
float64 routing weights, an output one row short, a stored 16-bit output one ulp off its fp64
value, a soft link that points nowhere, a dataset that is a soft link to another case's, a second hard
link to another case's dataset. (The real corpus passing proves little unless a broken one fails.)

Usage: check_golden_refuses.py --dir <the corpus>; exit 0 when every broken copy was refused.
"""
import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def first(f, prefix, topk_above=0):
    return next(n for n in sorted(f.keys()) if n.startswith(prefix) and int(f[n].attrs["topk"]) > topk_above)


def replace(group, path, values):
    del group[path]
    group[path] = values


def break_divisor(f):
    name = first(f, "gemm1", topk_above=1)
    f[name].attrs["a_row_divisor"] = np.int64(1)
    return name, "a_row_divisor is 1"


def break_weight_flag(f):
    name = first(f, "gemm2")
    f[name].attrs["mul_topk_weights"] = np.int64(0)
    return name, "only gemm2 multiplies by the routing weights"


def break_weight_type(f):
    name = first(f, "gemm")
    replace(f[name], "routing/topk_weights", f[name]["routing/topk_weights"][()].astype(np.float64))
    return name, "routing/topk_weights must be float32"


def break_output_rows(f):
    name = first(f, "gemm")
    group = f[name]
    for part in ("y", "y16", "s"):
        data, attrs = group[f"expected/{part}"][()], dict(group[f"expected/{part}"].attrs)
        replace(group, f"expected/{part}", data[:-1])
        group[f"expected/{part}"].attrs.update(attrs)
    return name, "expected/y is"


def break_rounding(f):
    name = first(f, "gemm")
    y16 = f[name]["expected/y16"]
    values = y16[()]
    values.flat[0] ^= np.uint16(1)
    y16[...] = values
    return name, "expected/y16 is not round-to-nearest-even"


def break_dangling_link(f):
    name = first(f, "gemm")
    f[name]["layouts/dangling"] = h5py.SoftLink("/nowhere")
    return name, "layouts/dangling is a soft link to '/nowhere'"


def break_aliased_output(f):
    name, other = sorted(n for n in f.keys() if n.startswith("gemm"))[:2]
    del f[name]["weights/codes"]
    f[name]["weights/codes"] = h5py.SoftLink(f"/{other}/weights/codes")
    return name, f"weights/codes is a soft link to '/{other}/weights/codes'"


def break_hard_alias(f):
    name, other = sorted(n for n in f.keys() if n.startswith("gemm"))[:2]
    del f[name]["weights/codes"]
    f[name]["weights/codes"] = f[other]["weights/codes"]  # a second hard link to the other's codes
    return name, "weights/codes is one object under 2 names"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=pathlib.Path, required=True)
    args = parser.parse_args()
    failures = 0
    for breaker in (break_divisor, break_weight_flag, break_weight_type, break_output_rows, break_rounding,
                    break_dangling_link, break_aliased_output, break_hard_alias):
        with tempfile.TemporaryDirectory(prefix="moeval-golden-refuses-") as tmp:
            for f in args.dir.glob("*.h5"):
                shutil.copy(f, tmp)
            with h5py.File(pathlib.Path(tmp) / "wna16.h5", "r+") as f:
                case, expected = breaker(f)
            run = subprocess.run([sys.executable, str(HERE / "check_golden.py"), "--dir", tmp], capture_output=True, text=True)
            refused = run.returncode == 1 and case in run.stdout and expected in run.stdout
            print(f"  {breaker.__name__}: {'refused' if refused else 'NOT REFUSED'} ({case})")
            if not refused:
                print(run.stdout + run.stderr)
                failures += 1
    print("check_golden_refuses.py: " + ("FAILED" if failures else "every broken copy was refused"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
