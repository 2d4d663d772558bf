"""Reproduce files: save() stores an output as judge reads it, load() refuses anything else than
such a file by name without reading what it cannot use, and `python -m moeval.repro` reports each
unreadable file and goes on with the others."""

import io
import json
import os
import struct
import zipfile

import numpy as np
import pytest

import moeval
from moeval import repro


def gemm2(**overrides):
    fields = dict(kind="gemm2", experts=8, tokens=16, topk=2, hidden=64, inter=512, weight_type="uint4b8",
                  group_size=128, dtype="bf16", seed=7)
    fields.update(overrides)
    return moeval.build_case(moeval.Problem(**fields))


def rewritten(source, target, members):
    """A copy of the archive `source` at `target` with `members` (name -> raw .npy bytes, or None
    to drop it) in place of its own."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zout:
        for name in zin.namelist():
            if name[:-len(".npy")] not in members:
                zout.writestr(name, zin.read(name))
        for key, raw in members.items():
            if raw is not None:
                zout.writestr(key + ".npy", raw)
    return str(target)


def npy(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def npy_header(shape, dtype):
    """The .npy header of an array of `shape` and `dtype`, without its data."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                                  "fortran_order": False, "shape": shape})
    return buffer.getvalue()


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_save_stores_float_outputs_as_judge_reads_them(tmp_path, dtype):
    # save() did np.asarray(output, uint16): the values 0.26, -1.5, ... became the bit patterns
    # 0, 65535, ..., and replay failed an output that judge passed.
    case = gemm2(dtype=dtype)
    ref = moeval.reference(case)
    values = moeval.decode(ref.y16, dtype)
    outputs = {"float64": values, "float32": values.astype(np.float32), "bits": ref.y16}
    if dtype == "fp16":
        outputs["float16"] = values.astype(np.float16)
    for kind, output in outputs.items():
        assert moeval.judge(case, output).passed, kind
        path = repro.save(str(tmp_path / kind), case, output, moeval.Contract())
        assert repro.replay(path).passed, kind
        _, stored, _ = repro.load(path)
        np.testing.assert_array_equal(stored, ref.y16)


def test_save_refuses_an_output_of_another_shape_and_writes_nothing(tmp_path):
    case = gemm2()
    target = tmp_path / "repro"
    with pytest.raises(ValueError, match=r"^repro.save: the output is \[32, 63\] but the case's routed rows × N are "
                                         r"\[32, 64\]; nothing written$"):
        repro.save(str(target), case, np.zeros((32, 63), np.uint16), moeval.Contract())
    with pytest.raises(ValueError, match=r"the output is \[2048\] but"):
        repro.save(str(target), case, np.zeros(32 * 64, np.float32), moeval.Contract())
    with pytest.raises(TypeError, match="float16 but the case's dtype is bf16"):  # judge's rule, too
        repro.save(str(target), case, np.zeros((32, 64), np.float16), moeval.Contract())
    assert not target.exists()


def test_save_writes_with_the_umasks_mode_and_leaves_no_temporary_file(tmp_path):
    # The file came from mkstemp with mode 0600: only its writer could replay it.
    case = gemm2()
    bits = moeval.reference(case).y16
    old = os.umask(0o022)
    try:
        path = repro.save(str(tmp_path), case, bits, moeval.Contract())
        os.umask(0o077)
        private = repro.save(str(tmp_path / "private"), case, bits, moeval.Contract())
    finally:
        os.umask(old)
    assert os.stat(path).st_mode & 0o777 == 0o644
    assert os.stat(private).st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path)) == sorted(["private", os.path.basename(path)])
    assert os.listdir(tmp_path / "private") == [os.path.basename(private)]
    old = os.umask(0o002)  # group-writable umask: still 0644, as the C++ writers give
    try:
        shared = repro.save(str(tmp_path / "shared"), case, bits, moeval.Contract())
    finally:
        os.umask(old)
    assert os.stat(shared).st_mode & 0o777 == 0o644


def test_main_names_each_unreadable_file_and_judges_the_others(tmp_path, capsys, monkeypatch):
    # Each of these was a traceback that stopped the run (exit 1): BadZipFile, EOFError,
    # AttributeError from getattr(case, 'bogus'), MemoryError from building the problem.
    case = gemm2()
    good = repro.save(str(tmp_path), case, moeval.reference(case).y16, moeval.Contract())
    data = open(good, "rb").read()
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(data[:len(data) // 2])
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    bogus = rewritten(good, tmp_path / "bogus.npz", {"input_bogus": npy(np.zeros(3))})
    not_text = rewritten(good, tmp_path / "not_text.npz", {"problem": npy(np.arange(4))})
    fields = dict(moeval.problem_fields(case.problem), tokens=2**20, hidden=2**14, inter=2**14)
    huge = rewritten(good, tmp_path / "huge.npz", {"problem": npy(np.array(json.dumps(fields)))})
    build_case = moeval.build_case

    def out_of_memory_when_huge(problem):  # as build_case fails on a machine without those 34 GB
        if problem.tokens == 2**20:
            raise MemoryError("std::bad_alloc")
        return build_case(problem)

    monkeypatch.setattr(moeval, "build_case", out_of_memory_when_huge)
    paths = [str(truncated), str(empty), bogus, not_text, huge]
    if os.path.exists("/dev/null"):
        paths.append("/dev/null")
    status = repro.main(paths + [good])
    out, err = capsys.readouterr()
    assert status == 2
    assert f"{truncated}: ERROR: is a damaged or truncated .npz archive" in err
    assert f"{empty}: ERROR: is empty, not an .npz archive" in err
    assert (f"{bogus}: ERROR: holds 'input_bogus.npy', which a repro file never has; allowed: problem.npy, "
            "contract.npy, output.npy, input_a.npy") in err
    assert f"{not_text}: ERROR: its 'problem' is an array of shape (4,)" in err
    assert f"{huge}: ERROR: MemoryError: its problem gemm2-E8-M1048576-" in err and "too large to build here" in err
    if "/dev/null" in paths:
        assert "/dev/null: ERROR: is not a regular file" in err  # a character device
    assert err.count("ERROR:") == len(paths)
    assert f"{good}: PASS" in out  # still judged after every bad one


def test_main_lets_an_error_of_moeval_itself_surface(tmp_path, monkeypatch):
    # Only the ways reading a file fails are reported as an unreadable file; a bug keeps its traceback.
    case = gemm2()
    good = repro.save(str(tmp_path), case, moeval.reference(case).y16, moeval.Contract())

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(moeval, "judge", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        repro.main([good])


def test_load_checks_stored_shapes_before_reading_the_data(tmp_path):
    # A 2 MB file of compressed zeros held a 32768 x 32768 output: load() decompressed its 2 GiB
    # before anything compared its shape. These members have a header and no data at all, so
    # reading them would fail with numpy's EOF error instead of the shape check.
    case = gemm2()
    good = repro.save(str(tmp_path), case, moeval.reference(case).y16, moeval.Contract())
    name = case.problem.name
    output = rewritten(good, tmp_path / "output.npz", {"output": npy_header((32768, 32768), np.uint16)})
    with pytest.raises(ValueError, match=rf"^{output}: the stored output is \[32768, 32768\] uint16, but {name} has "
                                         r"an output \(uint16 bits of its routed rows × N\) of \[32, 64\] uint16; not read$"):
        repro.load(output)
    floats = rewritten(good, tmp_path / "floats.npz", {"output": npy_header((32, 64), np.float32)})
    with pytest.raises(ValueError, match=r"the stored output is \[32, 64\] float32, but .* \[32, 64\] uint16"):
        repro.load(floats)
    codes = rewritten(good, tmp_path / "codes.npz", {"input_codes": npy_header((8, 1 << 20, 1 << 20), np.uint8)})
    with pytest.raises(ValueError, match=r"the stored input_codes is \[8, 1048576, 1048576\] uint8, but this moeval "
                                         r"builds for .* an input 'codes' of \[8, 512, 64\] uint8; not read"):
        repro.load(codes)
    text = rewritten(good, tmp_path / "text.npz", {"contract": npy_header((), "<U100000000")})  # 400 MB
    with pytest.raises(ValueError, match=r"its 'contract' is an array of shape \(\) and dtype <U100000000; "
                                         r"a repro file holds a str of at most 4194304 characters there"):
        repro.load(text)


def test_load_refuses_a_format_2_header_before_numpy_reads_it(tmp_path):
    # A 2.0 header's length is 32 bits, and numpy reads and decodes all of it before its own size
    # limit: a header claiming 1 GiB in a 1 MB file took 2 GB. Here a 2.0 magic with a length of
    # 2^31 and no header at all: reading it would fail with numpy's EOF error, not this message.
    case = gemm2()
    good = repro.save(str(tmp_path), case, moeval.reference(case).y16, moeval.Contract())
    forged = np.lib.format.magic(2, 0) + (1 << 31).to_bytes(4, "little")
    path = rewritten(good, tmp_path / "v2.npz", {"output": forged})
    with pytest.raises(ValueError, match=rf"^{path}: its 'output' is not a readable .npy array: a .npy array of "
                                         r"format version 2.0; moeval.repro.save writes 1.0$"):
        repro.load(path)


def test_load_refuses_what_is_not_a_regular_file(tmp_path):
    # np.load of a FIFO without a writer blocked for ever; the command's other files still ran.
    fifo = tmp_path / "fifo.npz"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=rf"^{fifo}: is not a regular file \(a FIFO, a device or a socket\)"):
        repro.load(str(fifo))
    with pytest.raises(ValueError, match="^/dev/zero: is not a regular file"):
        repro.load("/dev/zero")


def test_load_names_the_file_for_malformed_content(tmp_path):
    case = gemm2()
    good = repro.save(str(tmp_path), case, moeval.reference(case).y16, moeval.Contract())
    fields = moeval.problem_fields(case.problem)
    bad_json = rewritten(good, tmp_path / "json.npz", {"problem": npy(np.array("{not json"))})
    with pytest.raises(ValueError, match=rf"^{bad_json}: its problem cannot be rebuilt: JSONDecodeError: Expecting"):
        repro.load(bad_json)
    nested = rewritten(good, tmp_path / "nested.npz", {"problem": npy(np.array("[" * 100000))})
    with pytest.raises(ValueError, match=rf"^{nested}: its problem cannot be rebuilt: RecursionError"):
        repro.load(nested)  # json's recursion limit, a RuntimeError, escaped the reader
    unknown = rewritten(good, tmp_path / "field.npz", {"problem": npy(np.array(json.dumps(dict(fields, colour=1))))})
    with pytest.raises(ValueError, match=rf"^{unknown}: its problem cannot be rebuilt"):
        repro.load(unknown)
    contract = rewritten(good, tmp_path / "contract.npz", {"contract": npy(np.array("dequant=fma"))})
    with pytest.raises(ValueError, match=rf"^{contract}: its contract: .*allowed: sub_then_mul"):
        repro.load(contract)
    zeros = rewritten(good, tmp_path / "zeros.npz", {"input_zeros": npy(np.zeros((8, 4, 64), np.uint8))})
    with pytest.raises(ValueError, match=r"holds the input 'zeros', which this moeval does not build for"):
        repro.load(zeros)  # uint4b8 is symmetric: it has no zero points
    no_output = rewritten(good, tmp_path / "no_output.npz", {"output": None})
    with pytest.raises(ValueError, match=r"holds no 'output'"):
        repro.load(no_output)


def test_load_names_damaged_archives(tmp_path, capsys):
    # Found by flipping bytes of a repro file: each of these escaped `python -m moeval.repro` as a
    # traceback (zipfile's NotImplementedError, RuntimeError and OSError, tokenize's TokenError).
    case = gemm2()
    good = repro.save(str(tmp_path), case, moeval.reference(case).y16, moeval.Contract())
    raw = open(good, "rb").read()
    central, end = raw.find(b"PK\x01\x02"), raw.rfind(b"PK\x05\x06")  # first central entry, end record

    def patched(name, offset, fmt, value):
        data = bytearray(raw)
        struct.pack_into(fmt, data, offset, value)
        (tmp_path / name).write_bytes(bytes(data))
        return str(tmp_path / name)

    offset_cd = struct.unpack_from("<I", raw, end + 16)[0]
    damaged = [
        patched("version.npz", central + 6, "<B", 200),  # needs zip version 20.0: NotImplementedError
        patched("encrypted.npz", central + 8, "<H", struct.unpack_from("<H", raw, central + 8)[0] | 1),  # RuntimeError
        patched("offset.npz", end + 16, "<I", offset_cd + (1 << 20)),  # members before the file's start: OSError
    ]
    header = b"{'descr': '<u2', 'fortran_order': False, 'shape': (32, 64"  # unclosed: tokenize's error
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    bad_header = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header
    unparsable = rewritten(good, tmp_path / "header.npz", {"output": bad_header})
    for path in damaged:
        with pytest.raises(ValueError, match=rf"^{path}: is a damaged or truncated .npz archive"):
            repro.load(path)
    with pytest.raises(ValueError, match=rf"^{unparsable}: its 'output' is not a readable .npy array"):
        repro.load(unparsable)
    assert repro.main(damaged + [unparsable]) == 2
    assert capsys.readouterr().err.count("ERROR:") == len(damaged) + 1
