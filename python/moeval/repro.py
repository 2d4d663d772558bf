"""Reproduce files of a failing Python check: one .npz holding the problem, the contract, the
kernel's output and the case's inputs, enough to judge the output again without the kernel.

The case itself is rebuilt from the problem (cases are deterministic from their seed); the stored
inputs are compared with the rebuilt ones, so a file from another moeval version that would judge
against different data says so instead of giving a wrong verdict.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import tokenize
import zipfile
import zlib
from typing import Any, Tuple

import numpy as np

import moeval

# The case's arrays a repro file keeps (as input_<name>), and every member a repro file may hold.
_INPUTS = ("a", "topk_ids", "topk_weights", "codes", "scales", "g_idx", "zeros")
_MEMBERS = ("problem", "contract", "output") + tuple("input_" + name for name in _INPUTS)
# How zipfile reports an archive whose bytes are damaged or cut short: a CRC or header mismatch, a
# compressed stream that ends early or does not decode (deflate, or bzip2/lzma when a damaged
# header names them), a zip version or compression method it does not know, and (RuntimeError)
# a member flagged as encrypted. Caught only around reading the archive's bytes.
_DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError)
try:
    import lzma

    _DAMAGED += (lzma.LZMAError,)
except ImportError:  # a Python built without lzma cannot reach that decoder either
    pass
# Characters allowed in the stored problem (JSON) and contract name: room for an expert_map of
# hundreds of thousands of experts, while a forged header cannot ask for gigabytes.
_TEXT_LIMIT = 1 << 22


def save(directory: str, case: moeval.Case, output_bits: Any, contract: moeval.ContractLike) -> str:
    """Writes <directory>/<problem name>-<output hash>.npz (temp file + rename: never half-written);
    returns its path. The hash keeps two different failing outputs of one case apart.

    `output_bits` is read as judge reads an output (moeval.to_bits with the case's dtype: bits, float16,
    float32/float64 values, a torch tensor), so replaying the file gives judge's verdict; an
    output of another shape than the case's [M*topk, N] is a ValueError and nothing is written.
    """
    # np.asarray(output, uint16) turned float outputs into their values cast to integers (0.26 -> 0),
    # which replay then judged as bit patterns: a passing output came back as a failure.
    bits = moeval.to_bits(output_bits, case.dtype)
    if bits.shape != tuple(case.output_shape):
        raise ValueError(f"repro.save: the output is {list(bits.shape)} but the case's routed rows × N are "
                         f"{list(case.output_shape)}; nothing written")
    contract = moeval.as_contract(contract)
    os.makedirs(directory, exist_ok=True)
    digest = hashlib.sha1(bits.tobytes()).hexdigest()[:10]
    path = os.path.join(directory, f"{case.problem.name}-{digest}.npz")
    inputs = {name: getattr(case, name) for name in _INPUTS if getattr(case, name) is not None}
    # Created with mode 0644 less the umask, as moeval's C++ writers create golden and report files,
    # not as mkstemp does (0600): a repro file is for others to replay (a CI job's artifacts).
    fd, tmp = _create_exclusive(directory, ".repro-", ".npz")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, problem=json.dumps(moeval.problem_fields(case.problem)), contract=contract.name,
                                output=bits, **{"input_" + k: v for k, v in inputs.items()})
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def _create_exclusive(directory: str, prefix: str, suffix: str) -> Tuple[int, str]:
    """A new file in `directory` under a random name, opened for writing with the umask's mode."""
    for _ in range(100):
        path = os.path.join(directory, prefix + secrets.token_hex(8) + suffix)
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), path
        except FileExistsError:
            continue
    raise FileExistsError(f"repro.save: no free temporary name in {directory}")


@contextlib.contextmanager
def _reading(path: str, key: str):
    """Reading member `key`: zipfile's ways of failing on damaged bytes become one ValueError. Here
    an OSError too: the archive is open, and a member offset that points nowhere fails the seek."""
    try:
        yield
    except _DAMAGED + (OSError,) as e:
        raise ValueError(f"{path}: is a damaged or truncated .npz archive; reading its '{key}': "
                         f"{type(e).__name__}: {e}") from None


def _stored(data: Any, key: str, path: str) -> Tuple[tuple, np.dtype]:
    """The shape and dtype of member `key`, from its .npy header alone: its data is read only
    once they are known to be the expected ones (a few MB of compressed zeros can hold an array
    of many GB)."""
    with _reading(path, key), data.zip.open(key + ".npy") as f:
        try:
            version = np.lib.format.read_magic(f)
            # Only 1.0, whose header length is 16 bits (at most 64 KiB). 2.0's is 32 bits, and numpy
            # reads and decodes a header of up to 4 GiB before any limit of its own: a forged one of
            # 1 GiB in a 1 MB file took 2 GB. save() writes 1.0 (2.0 only for headers past 64 KiB,
            # which no array of a repro file has; 3.0 is for field names beyond latin-1).
            if version != (1, 0):
                raise ValueError(f"a .npy array of format version {version[0]}.{version[1]}; "
                                 "moeval.repro.save writes 1.0")
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        # numpy's own words name neither the file nor the member; a header that is not a Python
        # literal can fail in numpy's fallback parser with tokenize's error instead of ValueError.
        except (ValueError, SyntaxError, tokenize.TokenError) as e:
            raise ValueError(f"{path}: its '{key}' is not a readable .npy array: {e}") from None
    return tuple(shape), dtype


def _text(data: Any, key: str, path: str) -> str:
    """A stored str (the problem's JSON, the contract's name), checked to be one before it is read."""
    shape, dtype = _stored(data, key, path)
    if shape != () or dtype.kind != "U" or dtype.itemsize > 4 * _TEXT_LIMIT:
        raise ValueError(f"{path}: its '{key}' is an array of shape {shape} and dtype {dtype}; a repro file holds "
                         f"a str of at most {_TEXT_LIMIT} characters there")
    with _reading(path, key):
        return str(data[key])


def _array(data: Any, key: str, path: str, shape: tuple, dtype: np.dtype, what: str) -> np.ndarray:
    """Member `key`, read only when its header says `shape` and `dtype` (either byte order)."""
    stored_shape, stored_dtype = _stored(data, key, path)
    if stored_shape != shape or stored_dtype.kind != dtype.kind or stored_dtype.itemsize != dtype.itemsize:
        raise ValueError(f"{path}: the stored {key} is {list(stored_shape)} {stored_dtype}, but {what} "
                         f"{list(shape)} {dtype}; not read")
    with _reading(path, key):
        return np.asarray(data[key], dtype=dtype)


def load(path: str) -> Tuple[moeval.Case, np.ndarray, moeval.Contract]:
    """The case (rebuilt and checked against the stored inputs), the output bits and the contract.

    Raises ValueError naming the file for anything but a repro file that moeval.repro.save
    wrote for this moeval (an empty, damaged or other file, an unknown member, an array of
    another shape), OSError where the file cannot be opened, and MemoryError where its problem
    is too large to build here."""
    # np.load of a FIFO without a writer blocks for ever, and a device can stream without end.
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        raise ValueError(f"{path}: is not a regular file (a FIFO, a device or a socket); a repro file is an .npz archive")
    try:
        archive = np.load(path, allow_pickle=False)
    except ValueError as e:  # neither .npz nor .npy (numpy then tries pickle, which is refused)
        raise ValueError(f"{path}: is not an .npz archive written by moeval.repro.save (numpy: {e})") from None
    except EOFError:  # numpy's word for a file of no bytes
        raise ValueError(f"{path}: is empty, not an .npz archive written by moeval.repro.save") from None
    except _DAMAGED as e:  # begins like a zip archive, but is cut short or damaged
        raise ValueError(f"{path}: is a damaged or truncated .npz archive ({type(e).__name__}: {e})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError(f"{path}: is a single .npy array, not a repro file (an .npz archive written by moeval.repro.save)")
    with archive as data:
        return _read(data, path)


def _read(data: Any, path: str) -> Tuple[moeval.Case, np.ndarray, moeval.Contract]:
    members = data.zip.namelist()
    for name in members:
        # getattr(case, name) of an unknown input_<name> was an AttributeError from deep inside.
        if not name.endswith(".npy") or name[:-len(".npy")] not in _MEMBERS:
            raise ValueError(f"{path}: holds {name!r}, which a repro file never has; allowed: "
                             f"{', '.join(m + '.npy' for m in _MEMBERS)}")
    keys = [name[:-len(".npy")] for name in members]
    for key in ("problem", "contract", "output"):
        if key not in keys:
            raise ValueError(f"{path}: holds no '{key}'; not a repro file written by moeval.repro.save")
    problem_text, contract_text = _text(data, "problem", path), _text(data, "contract", path)
    try:
        problem = moeval.Problem(**json.loads(problem_text))
    # Not JSON (or nested deeper than json's recursion limit), not an object, unknown or ill-typed fields.
    except (ValueError, TypeError, RecursionError) as e:
        raise ValueError(f"{path}: its problem cannot be rebuilt: {type(e).__name__}: {e}") from None
    try:
        contract = moeval.Contract.parse(contract_text)
    except ValueError as e:
        raise ValueError(f"{path}: its contract: {e}") from None
    try:
        case = moeval.build_case(problem)
    except ValueError as e:  # a problem that cannot exist (validate() names the parameter)
        raise ValueError(f"{path}: its problem {problem.name} cannot be built: {e}") from None
    except MemoryError as e:
        raise MemoryError(f"{path}: its problem {problem.name} is too large to build here "
                          f"({str(e) or 'out of memory'})") from None
    output = _array(data, "output", path, tuple(case.output_shape), np.dtype(np.uint16),
                    f"{problem.name} has an output (uint16 bits of its routed rows × N) of")
    for key in keys:
        if not key.startswith("input_"):
            continue
        name = key[len("input_"):]
        built = getattr(case, name)
        if built is None:
            raise ValueError(f"{path}: holds the input '{name}', which this moeval does not build for {problem.name}; "
                             "the file was written by another version")
        values = _array(data, key, path, built.shape, built.dtype,
                        f"this moeval builds for {problem.name} an input '{name}' of")
        if not np.array_equal(built, values):
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
        # One bad file (missing, empty, damaged, not an .npz, written by another version, a problem
        # too large to build here) is reported and the others are still judged; the exit status
        # says the worst: 2 for a file that could not be read, else 1 for a failed verdict. Only
        # the ways reading a file fails are caught: any other exception is a bug in moeval and
        # surfaces with its traceback.
        try:
            verdict = replay(path)
        except _UNREADABLE as e:
            unreadable += 1
            what = (str(e) or type(e).__name__).removeprefix(path + ": ")
            if not isinstance(e, (OSError, ValueError)) and not what.startswith(type(e).__name__):
                what = f"{type(e).__name__}: {what}"  # "No data left in file" says little alone
            print(f"{path}: ERROR: {what}", file=sys.stderr)
            continue
        failed += not verdict.passed
        print(f"{path}: {verdict.summary()}")
    return 2 if unreadable else 1 if failed else 0


# What load() raises for a file it cannot read: a ValueError naming the file (its words for every
# damaged, empty, foreign or oversized content), an OSError where the file cannot be opened, a
# MemoryError where its problem is too large to build here. Nothing else: a TypeError or KeyError
# from judge or replay is a bug of moeval's and keeps its traceback.
_UNREADABLE = (OSError, ValueError, MemoryError)


if __name__ == "__main__":
    raise SystemExit(main())
