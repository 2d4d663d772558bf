"""judge() and the contract from Python: a numpy kernel under our contract passes every case of
the smoke matrix; deliberate corruptions fail with a useful message; the rounding-point kernel
passes under the contract that declares it."""

import os
import warnings

import numpy as np
import pytest

import moeval
from moeval import repro
from moeval.testing import assert_moe_close

import numpy_kernel


def test_correct_numpy_kernel_passes(moeval_case):
    verdict = assert_moe_close(numpy_kernel.run(moeval_case), moeval_case)
    assert verdict.passed and verdict.violations == 0
    if moeval_case.problem.tier == "bounded":
        assert 0.0 < verdict.max_ratio <= 1.0


def gemm2(**overrides):
    fields = dict(kind="gemm2", experts=8, tokens=16, topk=2, hidden=64, inter=512, weight_type="uint4b8",
                  group_size=128, dtype="bf16", seed=7)
    fields.update(overrides)
    return moeval.build_case(moeval.Problem(**fields))


def test_reference_y16_is_the_rounded_value_and_passes_itself():
    case = gemm2()
    ref = moeval.reference(case)
    np.testing.assert_array_equal(ref.y16, moeval.encode(np.ascontiguousarray(ref.y), case.dtype))
    verdict = moeval.judge(case, ref.y16, reference=ref)
    assert verdict.passed and verdict.contract == moeval.Contract()


def test_one_scale_off_fails_at_its_column(tmp_path):
    case = gemm2()
    expert = int(case.topk_ids.reshape(-1)[0])
    out = numpy_kernel.run(case, scale_off=(expert, 1, 5))
    with pytest.raises(AssertionError) as failure:
        assert_moe_close(out, case, repro_dir=str(tmp_path))
    message = str(failure.value)
    assert "worst element (" in message and ", 5) of expert" in message
    assert "bound" in message and "ratio" in message
    assert "pattern: confined to column 5" in message
    path = message.rsplit("reproduce: python -m moeval.repro ", 1)[1].strip()
    assert os.path.isfile(path)
    verdict = repro.replay(path)
    assert not verdict.passed and verdict.worst.col == 5
    assert verdict.summary() == moeval.judge(case, out).summary()


def test_repro_main_reports_a_bad_file_and_judges_the_others(tmp_path, capsys):
    case = gemm2()
    expert = int(case.topk_ids.reshape(-1)[0])
    good = repro.save(str(tmp_path), case, numpy_kernel.run(case, scale_off=(expert, 1, 5)), moeval.Contract())
    missing = str(tmp_path / "absent.npz")
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip archive")
    empty = tmp_path / "empty.npz"
    np.savez(empty, output=np.zeros(3, np.uint16))  # no problem, no contract
    single = tmp_path / "single.npy"
    np.save(single, np.zeros(3, np.uint16))
    status = repro.main([missing, str(garbage), str(empty), str(single), good])
    out, err = capsys.readouterr()
    assert status == 2  # unreadable files outrank the failed verdict
    assert f"{missing}: ERROR:" in err
    assert f"{garbage}: ERROR: is not an .npz archive" in err
    assert f"{empty}: ERROR: holds no 'problem'" in err
    assert f"{single}: ERROR: is a single .npy array" in err
    assert f"{good}: " in out  # the readable file was still judged
    assert repro.main([good]) == 1


def test_permuted_rows_fail_as_whole_rows(tmp_path):
    case = gemm2()
    ids = case.topk_ids.reshape(-1)
    other = int(np.flatnonzero(ids != ids[0])[0])
    with pytest.raises(AssertionError, match=r"pattern: whole rows: 2 rows entirely outside the bound \[0, " + str(other)):
        assert_moe_close(numpy_kernel.run(case, swap_rows=(0, other)), case, repro_dir=str(tmp_path))


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_rounding_before_the_routing_weight_needs_its_contract(dtype, tmp_path):
    case = gemm2(dtype=dtype)
    out = numpy_kernel.run(case, round_before_weight=True)
    default = moeval.judge(case, out)
    assert not default.passed and default.max_ratio > 1.0
    with pytest.raises(AssertionError, match="fails under contract 'dequant=sub_then_mul routing_weight=in_fp32_sum"):
        assert_moe_close(out, case, repro_dir=str(tmp_path))
    declared = moeval.Contract(routing_weight="after_output_rounding")
    verdict = assert_moe_close(out, case, declared)
    assert verdict.contract == declared and "routing_weight=after_output_rounding" in verdict.summary()
    assert verdict.max_ratio < 1.0
    # Declaring a contract is no licence: one scale off still fails under it.
    expert = int(case.topk_ids.reshape(-1)[0])
    assert not moeval.judge(case, numpy_kernel.run(case, scale_off=(expert, 0, 3), round_before_weight=True), declared).passed


def test_equal_contracts_hash_alike_and_other_types_compare_unequal():
    a, b = moeval.Contract(), moeval.Contract.parse("dequant=sub_then_mul")
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1 and len({a, b}) == 1
    other = moeval.Contract(dequant="scaled_zero_fma")
    assert a != other and len({a, other}) == 2
    assert (a == 5) is False and (a != "dequant=sub_then_mul") is True


def test_contract_changes_the_reference_and_the_bound():
    case = gemm2(weight_type="uint8", group_size=32)
    ours = moeval.reference(case)
    fp32 = moeval.reference(case, "dequant=sub_then_mul_fp32")
    scaled = moeval.reference(case, moeval.Contract(dequant="scaled_zero_fma"))
    assert not np.array_equal(ours.y, fp32.y) and not np.array_equal(ours.y, scaled.y)
    twice = moeval.reference(case, "routing_weight=after_output_rounding")
    np.testing.assert_array_equal(twice.y, ours.y)  # the same exact value, a wider bound
    assert twice.output_roundings == 2 and np.all(twice.bounds() >= ours.bounds())
    with pytest.raises(ValueError, match="allowed: sub_then_mul, sub_then_mul_fp32, scaled_zero_fma"):
        moeval.Contract(dequant="fma")


def test_exact_tier_reports_bits(tmp_path):
    case = gemm2(tier="exact", inter=128)
    out = numpy_kernel.run(case)
    assert moeval.judge(case, out).passed
    out[3, 7] ^= 1  # one ulp
    worst = moeval.judge(case, out).worst
    want = moeval.decode(np.array([worst.reference_bits], np.uint16), case.dtype)[0]
    assert worst.reference_rounded == want  # the 16-bit value compared, not the fp64 one
    with pytest.raises(AssertionError, match=r"pattern: a single element, \(3, 7\)") as raised:
        assert_moe_close(out, case, repro_dir=str(tmp_path))
    assert f"want exactly {want:.9g} (bits 0x{worst.reference_bits:04x})" in str(raised.value)
    assert f"want {want:.9g} (0x{worst.reference_bits:04x}), fp64 " in str(raised.value)  # the C++ summary line


def test_outputs_of_the_wrong_shape_or_type_are_refused():
    case = gemm2()
    with pytest.raises(ValueError, match="routed rows"):
        moeval.judge(case, np.zeros((3, 3), np.uint16))
    with pytest.raises(TypeError, match="int32"):
        moeval.judge(case, np.zeros(case.output_shape, np.int32))
    with pytest.raises(TypeError, match="float16 but the case's dtype is bf16"):
        moeval.judge(case, np.zeros(case.output_shape, np.float16))


def test_as_torch_shares_a_writable_array_and_copies_a_read_only_one():
    torch = pytest.importorskip("torch")
    bits = np.arange(6, dtype=np.uint16).reshape(2, 3) + np.uint16(0x3C00)
    shared = moeval.as_torch(bits, "fp16")
    assert shared.dtype == torch.float16 and np.shares_memory(shared.numpy(), bits)
    frozen = bits.copy()
    frozen.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns when it wraps a read-only array
        copied = moeval.as_torch(frozen, "fp16")
    copied[0, 0] = 0.0
    assert frozen[0, 0] == 0x3C00 and not np.shares_memory(copied.numpy(), frozen)
    assert np.array_equal(copied.view(torch.int16).numpy().view(np.uint16)[1], frozen[1])


def test_as_torch_refuses_other_element_types_and_dtypes_before_importing_torch():
    # Checked first, so these run without torch: a float32 array would have come back as twice as
    # many meaningless halves, an unknown dtype as a KeyError.
    with pytest.raises(TypeError, match="uint16 array of fp16 bit patterns.*got float32"):
        moeval.as_torch(np.ones(4, np.float32), "fp16")
    with pytest.raises(TypeError, match="got int16"):
        moeval.as_torch(np.ones(4, np.int16), "bf16")
    with pytest.raises(ValueError, match="dtype 'fp32' is not one of fp16, bf16"):
        moeval.as_torch(np.ones(4, np.uint16), "fp32")


def test_torch_outputs_are_read_as_bits():
    torch = pytest.importorskip("torch")
    case = gemm2(dtype="fp16")
    bits = numpy_kernel.run(case)
    assert moeval.judge(case, moeval.as_torch(bits, "fp16")).passed
    with pytest.raises(TypeError, match="bfloat16"):
        moeval.judge(case, torch.zeros(case.output_shape, dtype=torch.bfloat16))


def test_editing_case_problem_does_not_change_how_it_is_judged():
    case = gemm2(tier="exact", inter=128)
    ref = moeval.reference(case)
    out = ref.y16.copy()
    # One ulp off where the bounded tier allows it: fails the exact tier, passes the bounded one.
    flipped = moeval.decode(out ^ np.uint16(1), case.dtype)
    row, col = np.argwhere(np.abs(flipped - ref.y) <= ref.bounds())[0]
    out[row, col] ^= 1
    assert moeval.compare(ref, out, "bounded").passed
    case.problem.tier = "bounded"  # a copy: the case stays exact
    assert case.problem.tier == "exact"
    assert not moeval.judge(case, out).passed


def test_compare_and_ratios_refuse_values_that_are_not_bits():
    case = gemm2(dtype="fp16")
    ref = moeval.reference(case)
    # These were converted value by value to uint16 (a FAIL full of NaNs, not an error).
    with pytest.raises(TypeError, match=r"compare: output must be 16-bit bit patterns \(a numpy np.uint16 array"):
        moeval.compare(ref, ref.y.astype(np.float16), "bounded")
    with pytest.raises(TypeError, match=r"Reference.ratios: output must be 16-bit bit patterns .*float32"):
        ref.ratios(ref.y.astype(np.float32), "bounded")
    with pytest.raises(ValueError, match=r"compare: output must be 2-D \[rows, cols\] = \[32, 64\]; got a 1-D array of shape \(2048,\)"):
        moeval.compare(ref, ref.y16.ravel(), "bounded")
    assert moeval.compare(ref, ref.y16, "bounded").passed
    assert moeval.compare(ref, np.asfortranarray(ref.y16), "exact").passed  # uint16 of any layout is read as is
    assert (ref.ratios(ref.y16, "exact") == 0).all()


def test_a_reference_of_another_case_is_refused():
    a, b = gemm2(seed=1), gemm2(seed=2)
    ref_a = moeval.reference(a)
    assert ref_a.problem.name == a.problem.name
    with pytest.raises(ValueError, match=r"the reference passed as reference= was computed for .*-s1, not for this case \(.*-s2\)"):
        assert_moe_close(ref_a.y16, b, reference=ref_a)
    with pytest.raises(ValueError, match="reference= was computed for"):
        moeval.judge(b, ref_a.y16, reference=ref_a)
    # The tier only changes the comparison, so the reference of the same problem under the other tier is fine.
    exact = gemm2(seed=1, tier="exact")
    assert moeval.judge(exact, ref_a.y16, reference=ref_a).passed


def test_a_nan_zipf_exponent_is_refused_before_any_case_is_built():
    # A NaN here once built a case whose own reference judge() refused (problem_fields() dicts
    # compared nan != nan, "reference= was computed for <the same name>"). validate() now refuses a
    # non-finite exponent whatever the routing, and Problem equality treats NaN as equal to NaN
    # (test_problems_are_equal_field_by_field_and_unhashable) should an unvalidated one be compared.
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="zipf_exponent = .* must be finite"):
            gemm2(zipf_exponent=bad)


def test_to_bits_reads_dtype_aliases_and_refuses_unknown_names():
    # to_bits compared the name with the literal "fp16" ("the output is float16 but the case's
    # dtype is float16"), and took uint16 bits with any name at all.
    halves = np.array([[1.0, 0.5]], np.float16)
    for alias in ("fp16", "f16", "float16", "half"):
        np.testing.assert_array_equal(moeval.to_bits(halves, alias), halves.view(np.uint16))
    values = np.array([[1.0, 0.1]])
    np.testing.assert_array_equal(moeval.to_bits(values, "bfloat16"), moeval.encode(values, "bf16"))
    with pytest.raises(TypeError, match="float16 but the case's dtype is bf16"):
        moeval.to_bits(halves, "bfloat16")
    for name, array in (("nonsense", np.zeros((1, 1), np.uint16)), ("x", halves), ("fp32", values)):
        with pytest.raises(ValueError, match=rf"^to_bits: dtype '{name}' is not one of fp16, bf16"):
            moeval.to_bits(array, name)
    with pytest.raises(TypeError, match="to_bits: dtype must be a str, 'fp16' or 'bf16'; got NoneType"):
        moeval.to_bits(halves, None)
    # as_torch reads the same names (checked before torch is imported).
    with pytest.raises(TypeError, match="uint16 array of fp16 bit patterns"):
        moeval.as_torch(np.ones(4, np.float32), "half")


class _FakeTensor:
    """Just enough of a torch tensor for to_bits, so its torch path runs without torch."""

    __module__ = "torch"  # what to_bits looks at to take the torch path

    def __init__(self, dtype, bits):
        self.dtype, self.bits = dtype, bits

    def detach(self):
        return self

    contiguous = cpu = detach

    def view(self, dtype):
        return self

    def numpy(self):
        return self.bits.view(np.int16)


def test_torch_outputs_accept_dtype_aliases(monkeypatch):
    # _torch_bits looked the name up in {"fp16": ..., "bf16": ...}: an alias was a KeyError.
    import sys
    import types

    torch = types.ModuleType("torch")
    torch.float16, torch.bfloat16, torch.int16 = "torch.float16", "torch.bfloat16", "torch.int16"
    monkeypatch.setitem(sys.modules, "torch", torch)
    bits = np.array([[0x3C00, 0x4000]], np.uint16)
    np.testing.assert_array_equal(moeval.to_bits(_FakeTensor(torch.float16, bits), "half"), bits)
    np.testing.assert_array_equal(moeval.to_bits(_FakeTensor(torch.bfloat16, bits), "bfloat16"), bits)
    with pytest.raises(TypeError, match="the case's dtype is bf16"):
        moeval.to_bits(_FakeTensor(torch.float16, bits), "bfloat16")


def test_output_messages_name_the_function_called_and_the_fault():
    # judge's 1-D uint16 output was "TypeError: compare: output must be a CPU np.uint16 array"
    # (the array is uint16 and on the CPU; it is 1-D, and the caller called judge), and compare's
    # and Reference.ratios' wrong shapes said "judge: the output is ...".
    case = gemm2()
    ref = moeval.reference(case)
    flat = np.zeros(32 * 64, np.uint16)
    calls = {"judge": lambda out: moeval.judge(case, out), "compare": lambda out: moeval.compare(ref, out, "bounded"),
             "Reference.ratios": lambda out: ref.ratios(out, "bounded")}
    for name, call in calls.items():
        with pytest.raises(ValueError, match=rf"^{name}: output must be 2-D \[rows, cols\] = \[32, 64\]; "
                                             r"got a 1-D array of shape \(2048,\)$"):
            call(flat)
        with pytest.raises(ValueError, match=rf"^{name}: the output is \[3, 3\] but the case's routed rows × N "
                                             r"are \[32, 64\]$"):
            call(np.zeros((3, 3), np.uint16))
    with pytest.raises(ValueError, match=r"^judge: output must be 2-D .*; got a 3-D array of shape \(1, 32, 64\)$"):
        moeval.judge(case, np.zeros((1, 32, 64), np.float32))  # values: to_bits keeps the shape
