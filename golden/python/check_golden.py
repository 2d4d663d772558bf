#!/usr/bin/env python3
"""Reads the moeval golden files with h5py + numpy, independently of the C++ code.

For every family file: the root provenance attributes and schema version, then every case in
full: every dataset is readable, 16-bit floats carry a `dtype` attribute and decode to
finite numbers, codes lie in the range of the weight type, the routing and the inputs and outputs
have the shapes the case's kind gives them (and a GEMM case's row divisor and routing-weight flag
fit its kind), every object is a group or dataset under one hard link, and the stored 16-bit
outputs are the round-to-nearest-even of the stored fp64 outputs (checked here with numpy, not
with our C++).

Exit status 0 when everything holds, 1 otherwise. A missing h5py is a failure, not a skip: CI
installs it (ci/install-deps.sh).
"""
import argparse
import pathlib
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # noqa: F841 - reported below
    print(f"check_golden.py: FAILED: h5py and numpy are required ({e}); run ci/install-deps.sh", file=sys.stderr)
    sys.exit(1)

SCHEMA_VERSION = 1
FAMILIES = ("wna16", "marlin", "layouts", "layer")
ROOT_ATTRIBUTES = ("schema_version", "generator_version", "git_commit", "date", "reference_backend", "family")
CODE_MAX = {"uint4b8": 15, "uint4": 15, "uint8b128": 255, "uint8": 255}


class CheckError(Exception):
    pass


def require(condition, message):
    if not condition:
        raise CheckError(message)


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def decode16(bits, dtype):
    """fp16/bf16 bits (uint16 array) -> float64 values."""
    bits = np.asarray(bits, dtype=np.uint16)
    if dtype == "fp16":
        return bits.view(np.float16).astype(np.float64)
    require(dtype == "bf16", f"unknown 16-bit dtype {dtype!r}")
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def round16(values, dtype):
    """Round float64 values to fp16/bf16 bits, nearest even, in one step (no double rounding)."""
    values = np.asarray(values, dtype=np.float64)
    if dtype == "fp16":
        return values.astype(np.float16).view(np.uint16)  # numpy rounds double -> half directly
    mantissa, exponent = np.frexp(values)  # |mantissa| in [0.5, 1): bf16 keeps 8 significant bits
    rounded = np.ldexp(np.rint(mantissa * 256.0) / 256.0, exponent)  # rint: ties to even
    require(np.all(np.abs(rounded[np.isfinite(rounded)]) < 3.3e38), "bf16 overflow is outside this check")
    return (rounded.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def check_outputs(group, prefix, dtype, where):
    y = group[prefix + "y"][()]
    y16 = group[prefix + "y16"][()]
    s = group[prefix + "s"][()]
    require(y.dtype == np.float64 and s.dtype == np.float64, f"{where}: {prefix}y and {prefix}s must be float64")
    require(y.shape == y16.shape == s.shape, f"{where}: {prefix}y, y16, s shapes differ")
    require(text(group[prefix + "y16"].attrs.get("dtype", b"")) == dtype, f"{where}: {prefix}y16 dtype attribute")
    require(np.all(s >= 0), f"{where}: {prefix}s (the bound statistic) must be non-negative")
    # -0 and +0 are the same output (an unrouted row is an exact zero of either sign).
    def no_signed_zero(bits):
        return np.where(bits == 0x8000, 0, bits)
    mismatch = np.flatnonzero(no_signed_zero(round16(y, dtype)) != no_signed_zero(y16))
    require(mismatch.size == 0,
            f"{where}: {prefix}y16 is not round-to-nearest-even of {prefix}y at flat index "
            f"{mismatch[:5].tolist()} (stored {y16.flat[mismatch[0]] if mismatch.size else 0:#06x})")
    return y.size


def hard_links(group, where):
    """Every object under `group` is a group or a dataset under one hard link (our writer makes no
    other kind, and names each object once); returns the datasets by path. h5py's visititems
    passes over a soft link that points nowhere and follows one that aliases another case's data,
    so the links are walked here one by one."""
    datasets = {}
    pending = [("", group)]
    while pending:
        prefix, g = pending.pop()
        for key in g:
            path = prefix + key
            try:
                link = g.get(key, getlink=True)
            except TypeError as e:  # h5py: "Unknown link type" (a user-defined link)
                raise CheckError(f"{where}: {path} is a link of a kind h5py does not know ({e}); "
                                 "golden files hold only hard links") from None
            if isinstance(link, h5py.SoftLink):
                raise CheckError(f"{where}: {path} is a soft link to {link.path!r}; golden files hold only hard links")
            require(isinstance(link, h5py.HardLink), f"{where}: {path} is an external link; golden files hold only hard links")
            obj = g[key]
            names = h5py.h5o.get_info(obj.id).rc
            require(names == 1, f"{where}: {path} is one object under {names} names (hard links); "
                                "golden files give each object one name")
            if isinstance(obj, h5py.Group):
                pending.append((path + "/", obj))
            else:
                require(isinstance(obj, h5py.Dataset), f"{where}: {path} is a {type(obj).__name__}, not a group or a dataset")
                datasets[path] = obj
    return datasets


def check_gemm_shapes(group, attrs, where):
    """A GEMM case's activation rows, row divisor, routing-weight flag and output shape agree with
    its kind: GEMM1 reads A row slot / topk (one row a token) and never multiplies by the routing
    weights, GEMM2 reads row slot and always does; the output is [M·topk, N] of the codes' N."""
    kind, tokens, topk = text(attrs["kind"]), int(attrs["tokens"]), int(attrs["topk"])
    require(kind in ("gemm1", "gemm2"), f"{where}: kind {kind!r} is not gemm1, gemm2 or layer")
    divisor = topk if kind == "gemm1" else 1
    for key in ("a_row_divisor", "mul_topk_weights"):
        require(key in attrs, f"{where}: attribute {key} is missing")
    require(int(attrs["a_row_divisor"]) == divisor, f"{where}: a_row_divisor is {int(attrs['a_row_divisor'])}, a {kind} "
                                                     f"case with topk {topk} reads A row slot / {divisor}")
    require(bool(attrs["mul_topk_weights"]) == (kind == "gemm2"),
            f"{where}: mul_topk_weights is {int(attrs['mul_topk_weights'])}; only gemm2 multiplies by the routing weights")
    _, k, n = group["weights/codes"].shape
    a = group["inputs/a"].shape
    require(a == (tokens * topk // divisor, k), f"{where}: inputs/a is {a}, not [{tokens * topk // divisor}, {k}] (rows, K)")
    y = group["expected/y"].shape
    require(y == (tokens * topk, n), f"{where}: expected/y is {y}, not [M·topk, N] = [{tokens * topk}, {n}]")


def check_case(f, name, family):
    group = f[name]
    where = f"{f.filename}:{name}"
    attrs = {k: group.attrs[k] for k in group.attrs}
    for key in ("kind", "experts", "tokens", "topk", "hidden", "inter", "weight_type", "group_size", "act_dtype",
                "tier", "seed", "problem_name"):
        require(key in attrs, f"{where}: attribute {key} is missing")
    dtype = text(attrs["act_dtype"])
    require(text(attrs["problem_name"]) == name, f"{where}: problem_name differs from the group name")

    datasets = hard_links(group, where)
    for path, ds in datasets.items():
        values = ds[()]  # every dataset must decompress and read
        if "dtype" in ds.attrs:
            require(ds.dtype == np.uint16, f"{where}: {path} has a dtype attribute but is {ds.dtype}")
            require(text(ds.attrs["dtype"]) == dtype, f"{where}: {path} dtype differs from the case's act_dtype")
            require(np.all(np.isfinite(decode16(values, dtype))), f"{where}: {path} holds non-finite 16-bit values")

    code_max = CODE_MAX[text(attrs["weight_type"])]
    gemms = ("w13/", "w2/") if text(attrs["kind"]) == "layer" else ("",)
    for gemm in gemms:
        codes = group[f"weights/{gemm}codes"][()]
        require(codes.dtype == np.uint8 and codes.ndim == 3, f"{where}: weights/{gemm}codes must be uint8 [E, K, N]")
        require(codes.size == 0 or int(codes.max()) <= code_max, f"{where}: weights/{gemm}codes exceed {code_max}")
    tokens, topk = int(attrs["tokens"]), int(attrs["topk"])
    ids = group["routing/topk_ids"][()]
    require(ids.shape == (tokens, topk), f"{where}: routing/topk_ids shape")
    require(ids.size == 0 or (ids.min() >= 0 and ids.max() < int(attrs["experts"])), f"{where}: topk_ids out of range")
    weights = group["routing/topk_weights"][()]
    require(weights.dtype == np.float32 and weights.shape == ids.shape,
            f"{where}: routing/topk_weights must be float32 of the ids' shape {ids.shape}; is {weights.dtype} {weights.shape}")
    require(np.all(np.isfinite(weights)), f"{where}: routing/topk_weights holds non-finite values")

    if text(attrs["kind"]) == "layer":
        hidden, inter = int(attrs["hidden"]), int(attrs["inter"])
        require(group["inputs/x"].shape == (tokens, hidden), f"{where}: inputs/x is {group['inputs/x'].shape}, not [M, H]")
        stages = {"gemm1": (tokens * topk, 2 * inter), "act": (tokens * topk, inter), "gemm2": (tokens * topk, hidden),
                  "out": (tokens, hidden)}
        for stage, shape in stages.items():
            have = group[f"expected/{stage}/y"].shape
            require(have == shape, f"{where}: expected/{stage}/y is {have}, not {shape}")
        checked = sum(check_outputs(group, f"expected/{stage}/", dtype, where) for stage in stages)
    else:
        check_gemm_shapes(group, attrs, where)
        checked = check_outputs(group, "expected/", dtype, where)
    layouts = sorted({p.split("/")[1] for p in datasets if p.startswith("layouts/")})
    return len(datasets), checked, layouts


def check_file(path, family):
    require(path.is_file(), f"{path}: missing")
    with h5py.File(path, "r") as f:
        for key in ROOT_ATTRIBUTES:
            require(key in f.attrs, f"{path}: root attribute {key} is missing")
        require(int(f.attrs["schema_version"]) == SCHEMA_VERSION,
                f"{path}: schema_version {f.attrs['schema_version']} (this check reads {SCHEMA_VERSION})")
        require(text(f.attrs["family"]) == family, f"{path}: family attribute is {text(f.attrs['family'])!r}")
        names = sorted(f.keys())
        require(names, f"{path}: no cases")
        for name in names:
            link = f.get(name, getlink=True)
            require(isinstance(link, h5py.HardLink), f"{path}:{name}: is a {type(link).__name__}, not a hard link; "
                                                     "golden files hold only hard links")
        count = outputs = 0
        layouts = set()
        for name in names:  # every case: the whole corpus reads in well under a second
            c, o, lay = check_case(f, name, family)
            count, outputs = count + c, outputs + o
            layouts.update(lay)
        commit = text(f.attrs["git_commit"])
        dirty = commit.endswith("-dirty")  # a short hash alone would hide the mark
        commit = commit.removesuffix("-dirty")[:12] + ("-dirty" if dirty else "")
        print(f"  {path.name}: {len(names)} cases, commit {commit}, "
              f"{text(f.attrs['date'])}: {count} datasets read, {outputs} outputs re-rounded, "
              f"layouts {sorted(layouts) or 'none'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent / "data")
    args = parser.parse_args()
    print(f"check_golden.py: h5py {h5py.__version__}, numpy {np.__version__}, {args.dir}")
    failed = False
    for family in FAMILIES:
        try:
            check_file(args.dir / f"{family}.h5", family)
        except (CheckError, OSError, KeyError, ValueError, TypeError) as e:  # a malformed file: one line, no traceback
            print(f"  FAILED: {e}")
            failed = True
    print("check_golden.py: FAILED" if failed else "check_golden.py: all golden files read")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
