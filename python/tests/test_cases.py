"""Problems, cases, layouts and moe_align's reference from Python (CPU only)."""

import gc
import re

import numpy as np
import pytest

import moeval


def test_problem_keywords_and_defaults_round_trip():
    p = moeval.Problem(kind="gemm2", weight_type="uint4", group_size=32, dtype="fp16", tokens=5, seed=3)
    assert (p.kind, p.weight_type, p.group_size, p.dtype, p.tokens, p.seed) == ("gemm2", "uint4", 32, "fp16", 5, 3)
    again = moeval.Problem(**moeval.problem_fields(p))
    assert again.name == p.name


@pytest.mark.parametrize("field,value,allowed", [
    ("weight_type", "int3", "uint4b8"),
    ("dtype", "fp8", "bf16"),
    ("kind", "gemm3", "gemm1, gemm2, layer"),
    ("tier", "fuzzy", "exact, bounded"),
    ("routing", "random", "softmax, uniform, zipf"),
])
def test_bad_problem_fields_are_named(field, value, allowed):
    with pytest.raises(ValueError, match=allowed):
        moeval.Problem(**{field: value})


def test_impossible_problem_is_a_value_error_naming_the_parameter():
    with pytest.raises(ValueError, match="group_size = 48"):
        moeval.build_case(moeval.Problem(kind="gemm1", group_size=48))


def test_matrices_have_unique_names_and_build():
    assert moeval.matrix_names() == ["quick", "standard", "full", "default", "smoke"]  # the CLI's registry
    smoke = moeval.matrix("smoke")
    assert len({p.name for p in smoke}) == len(smoke)
    assert len(moeval.matrix("default")) > len(smoke)
    with pytest.raises(ValueError, match="known: quick, standard, full, default, smoke"):
        moeval.matrix("huge")


def test_arrays_are_read_only_views_that_keep_the_case_alive():
    problem = moeval.Problem(kind="gemm1", experts=4, tokens=8, topk=2, hidden=128, inter=64)
    a = moeval.build_case(problem).a  # the Case object is dropped at once
    gc.collect()
    fresh = moeval.build_case(problem)
    assert a.dtype == np.uint16 and a.shape == (8, 128)
    assert not a.flags.writeable
    np.testing.assert_array_equal(a, fresh.a)
    # Two reads of one case view the same memory (no copy per access).
    assert np.shares_memory(fresh.a, fresh.a) and fresh.a.__array_interface__["data"][0] == fresh.a.__array_interface__["data"][0]


def test_case_arrays_have_the_documented_shapes():
    p = moeval.Problem(kind="gemm2", experts=8, tokens=6, topk=2, hidden=128, inter=256, weight_type="uint4", group_size=64,
                       expert_map=[0, -1, 1, -1, 2, -1, 3, -1])
    c = moeval.build_case(p)
    m, n, k = c.shape
    assert (m, n, k) == (12, 128, 256) and c.output_shape == (12, 128)
    assert c.codes.shape == (4, 256, 128) and c.codes.max() <= 15
    assert c.scales.shape == (4, 4, 128) and c.zeros.shape == (4, 4, 128)
    assert c.topk_ids.shape == (6, 2) and c.topk_weights.dtype == np.float32
    assert list(c.expert_map) == p.expert_map
    assert c.perm is None and c.g_idx.shape == (4, 256)


@pytest.mark.parametrize("bits,weight_type", [(4, "uint4b8"), (8, "uint8b128")])
def test_every_layout_packs_with_its_documented_shapes(bits, weight_type):
    c = moeval.build_case(moeval.Problem(kind="gemm1", experts=2, tokens=4, topk=1, hidden=256, inter=64,
                                         weight_type=weight_type, group_size=64))
    e, k, n = c.codes.shape
    pf = 32 // bits
    expected = {
        "wna16": {"qweight": (e, n, k * bits // 8), "scales": (e, n, k // 64)},
        "marlin": {"qweight": (e, k // 16, n * 16 // pf), "scales": (e, k // 64, n)},
        "gptq": {"qweight": (e, k // pf, n), "scales": (e, k // 64, n)},
        "compressed_tensors": {"weight_packed": (e, n, k * bits // 32), "weight_scale": (e, n, k // 64)},
    }
    for name, shapes in expected.items():
        layout = c.layout(name)
        arrays = layout.arrays
        assert layout.attrs["bits"] == bits
        for array, shape in shapes.items():
            assert arrays[array].shape == shape, (name, array)
    if bits == 4:  # AWQ is 4-bit only
        assert c.layout("awq").arrays["qweight"].shape == (e, k, n // 8)
    with pytest.raises(ValueError, match="allowed: wna16, marlin, gptq, awq, compressed_tensors"):
        c.layout("exl2")


@pytest.mark.parametrize("group_size", [-1, 64])
def test_layout_arrays_keep_their_rank_with_one_group(group_size):
    # With a channelwise scheme (one group) the zero points' group axis is 1 and is kept: the
    # arrays have the same rank as with groups (before 2026-12-05 wna16's qzeros and
    # compressed-tensors' weight_zero_point lost it and came out 2-D).
    c = moeval.build_case(moeval.Problem(kind="gemm1", experts=2, tokens=4, topk=1, hidden=256, inter=64,
                                         weight_type="uint4", group_size=group_size))
    e, k, n = c.codes.shape
    groups = 1 if group_size == -1 else k // group_size
    assert c.layout("wna16").arrays["qzeros"].shape == (e, n // 2, groups)
    assert c.layout("compressed_tensors").arrays["weight_zero_point"].shape == (e, n * 4 // 32, groups)
    assert c.layout("gptq").arrays["qzeros"].shape == (e, groups, n // 8)
    assert c.layout("marlin").arrays["zeros"].shape == (e, groups, n // 8)


def test_every_layout_of_the_smoke_matrix_states_every_array_shape():
    # Every array's shape is stated, never guessed: a size that does not fit would raise.
    for p in moeval.matrix("smoke"):
        c = moeval.build_case(p)
        for name in ("wna16", "marlin", "gptq", "awq", "compressed_tensors"):
            try:
                arrays = c.layout(name).arrays
            except ValueError:
                continue  # a scheme this layout cannot hold (act-order in wna16, 8-bit AWQ, ...)
            for array_name, array in arrays.items():
                rank = 2 if array_name in ("g_idx", "perm", "weight_g_idx") else 3
                assert array.ndim == rank, (p.name, name, array_name, array.shape)
                assert array.shape[0] == c.codes.shape[0], (p.name, name, array_name, array.shape)


def test_gptq_words_hold_the_logical_codes():
    """Unpack GPTQ's qweight in numpy (8 nibbles per int32 along K, lowest first) and find the codes."""
    c = moeval.build_case(moeval.Problem(kind="gemm1", experts=2, tokens=4, topk=1, hidden=128, inter=32))
    q = c.layout("gptq").arrays["qweight"]
    nibbles = np.stack([(q >> (4 * i)) & 0xF for i in range(8)], axis=2)  # [E, K/8, 8, N]
    np.testing.assert_array_equal(nibbles.reshape(c.codes.shape), c.codes)


@pytest.mark.parametrize("block", [8, 16, 64])
def test_align_reference_puts_every_slot_once_in_its_experts_block(block):
    c = moeval.build_case(moeval.Problem(kind="gemm1", experts=16, tokens=13, topk=4, routing="zipf"))
    a = c.align(block)
    ids = c.topk_ids.reshape(-1)
    slots = ids.size
    sorted_ids, experts = a["sorted_token_ids"], a["expert_ids"]
    assert a["num_tokens_post_padded"] == sorted_ids.size == experts.size * block
    real = sorted_ids[sorted_ids < slots]
    assert sorted(real.tolist()) == list(range(slots))
    assert np.all(ids[real] == np.repeat(experts, block)[sorted_ids < slots])
    assert np.all(sorted_ids[sorted_ids >= slots] == slots)


def test_align_refuses_a_block_size_that_pads_past_int32_before_allocating():
    # 2**31 with the case's experts in use asked for tens of GB of ids (killed by the OOM killer).
    c = moeval.build_case(moeval.Problem(kind="gemm1", experts=16, tokens=13, topk=4, routing="zipf"))
    for block in (2**31, 2**40):
        with pytest.raises(ValueError, match=r"past 2\^31 - 1 sorted ids"):
            c.align(block)


def test_arrays_travel_as_dlpack_without_a_copy():
    c = moeval.build_case(moeval.Problem(kind="gemm1", experts=2, tokens=4, topk=1, hidden=128, inter=32))
    for name in ("a", "codes", "scales", "topk_weights"):
        array = getattr(c, name)
        assert array.__dlpack_device__() == (1, 0)  # kDLCPU, device 0
        imported = np.from_dlpack(array)
        assert np.shares_memory(imported, array), name
    wna16 = c.layout("wna16").arrays["qweight"]
    assert np.shares_memory(np.from_dlpack(wna16), wna16)


def test_act_order_packs_where_the_layout_carries_g_idx_and_is_refused_elsewhere():
    c = moeval.build_case(moeval.Problem(kind="gemm2", experts=4, tokens=4, topk=2, hidden=128, inter=256,
                                         group_size=64, act_order=True, is_k_full=False, k_shards=2, k_shard_rank=1))
    assert c.perm is not None and c.k_shards == 2
    for name in ("marlin", "gptq", "compressed_tensors"):
        arrays = c.layout(name).arrays
        g_idx = arrays["g_idx" if name != "compressed_tensors" else "weight_g_idx"]
        assert g_idx.shape == c.g_idx.shape and g_idx.max() < 2 * 256 // 64, name
    for name in ("wna16", "awq"):
        with pytest.raises(ValueError, match="act"):
            c.layout(name)


def test_sizes_whose_products_overflow_are_a_value_error():
    # tokens · experts overflowed int64 and segfaulted in the routing.
    with pytest.raises(ValueError, match=r"tokens \(M\) = 4611686018427387904 exceeds 2\^31 - 1"):
        moeval.build_case(moeval.Problem(kind="gemm1", tokens=2**62))
    with pytest.raises(ValueError, match=r"tokens \(M\) · experts \(E\) is too large"):
        moeval.build_case(moeval.Problem(kind="gemm1", tokens=2**31 - 1, experts=1024))


@pytest.mark.parametrize("field,value,allowed", [
    ("seed", -1, "0 .. 18446744073709551615"),
    ("seed", 2**64, "0 .. 18446744073709551615"),
    ("tokens", 2**63, "-9223372036854775808 .. 9223372036854775807"),
    ("experts", -2**70, "-9223372036854775808 .. 9223372036854775807"),
    ("group_size", 2**31, "-2147483648 .. 2147483647"),
    ("k_shard_rank", 2**100, "-9223372036854775808 .. 9223372036854775807"),
    ("expert_map", [0, -1, 2**31], "-2147483648 .. 2147483647"),
])
def test_an_int_outside_its_fields_range_is_a_value_error_naming_the_field(field, value, allowed):
    # nanobind's own casters failed the whole call with "incompatible function arguments", which
    # named neither the field nor the range, in the constructor and in the setter alike.
    named, shown = (f"{field}[2]", value[2]) if isinstance(value, list) else (field, value)
    message = rf"Problem: {re.escape(named)} = {shown} is out of range; allowed {allowed}"
    with pytest.raises(ValueError, match=message):
        moeval.Problem(**{field: value})
    p = moeval.Problem()
    with pytest.raises(ValueError, match=message):
        setattr(p, field, value)
    assert p == moeval.Problem()  # a refused value changes nothing


def test_integer_fields_take_integers_and_name_the_field_for_anything_else():
    p = moeval.Problem(seed=2**64 - 1, tokens=-3)  # in range: kept as given (validate() judges sizes)
    assert (p.seed, p.tokens) == (2**64 - 1, -3)
    numpy_ints = moeval.Problem(tokens=np.int64(5), seed=np.uint64(2**63), expert_map=np.array([0, -1, 1], np.int32))
    assert (numpy_ints.tokens, numpy_ints.seed, numpy_ints.expert_map) == (5, 2**63, [0, -1, 1])
    with pytest.raises(ValueError, match=r"Problem: group_size = 4294967296 is out of range"):
        moeval.Problem(group_size=np.int64(2**32))

    class Shown(int):  # an int whose __str__ lies: the message writes its value
        def __str__(self):
            return "shown"
    with pytest.raises(ValueError, match=r"Problem: tokens = 9223372036854775808 is out of range"):
        moeval.Problem(tokens=Shown(2**63))
    # A bool or a float is named as such (True was taken as 1 before, a float failed the whole call).
    for bad, kind in ((True, "bool"), (1.5, "float"), (np.bool_(True), "numpy.bool")):
        message = rf"Problem: tokens = {re.escape(repr(bad))} is a {kind}_?; an integer is needed"
        with pytest.raises(TypeError, match=message):
            moeval.Problem(tokens=bad)
        with pytest.raises(TypeError, match=message):
            setattr(p, "tokens", bad)
    with pytest.raises(TypeError, match=r"Problem: expert_map\[1\] = False is a bool; an integer is needed"):
        moeval.Problem(expert_map=[0, False])
    with pytest.raises(TypeError, match="incompatible function arguments"):  # not a number at all
        moeval.Problem(tokens="3")


def test_case_problem_is_a_copy_that_cannot_change_the_case():
    case = moeval.build_case(moeval.Problem(kind="gemm2", tier="exact", seed=3))
    case.problem.tier = "bounded"  # edits a temporary copy
    assert case.problem.tier == "exact"
    p = case.problem
    p.seed = 7
    assert case.problem.seed == 3 and p.seed == 7
    assert moeval.build_case(p).problem.seed == 7  # the edited copy builds a new case


def test_decode_refuses_values_that_are_not_bits():
    # Implicit conversion read 1.0 as the bit pattern 0x0001 (5.96e-08).
    with pytest.raises(TypeError, match=r"decode: bits must be 16-bit bit patterns \(a numpy np.uint16 array\); got an array of dtype float64"):
        moeval.decode(np.array([1.0]), "fp16")
    with pytest.raises(TypeError, match="got list"):
        moeval.decode([15360], "fp16")
    bits = np.array([[0x3C00, 0x4000], [0, 0]], np.uint16)
    assert moeval.decode(bits, "fp16").tolist() == [[1.0, 2.0], [0.0, 0.0]]
    assert moeval.decode(bits[:, ::-1], "fp16").tolist() == [[2.0, 1.0], [0.0, 0.0]]  # non-contiguous uint16 is fine


def test_names_holding_a_nul_are_quoted_whole_in_the_error():
    # A C++ message ends at its first NUL on its way to Python: moeval.matrix("quick\0x") said
    # "matrix 'quick". The NUL is now written \0 and the rest of the message follows.
    case = moeval.build_case(moeval.Problem(kind="gemm2"))
    ref = moeval.reference(case)
    problem = moeval.Problem()
    calls = [
        (lambda: moeval.matrix("quick\0x"), r"matrix 'quick\0x' is unknown; known: quick, standard"),
        (lambda: moeval.matrix("smoke\0"), r"matrix 'smoke\0' is unknown; known: quick"),
        (lambda: moeval.Problem(kind="gemm2\0"), r"kind 'gemm2\0' is not supported; allowed: gemm1, gemm2, layer"),
        (lambda: moeval.Problem(tier="exact\0"), r"tier 'exact\0' is not supported; allowed: exact, bounded"),
        (lambda: moeval.Problem(dtype="fp16\0"), r"activation dtype 'fp16\0' is not supported; allowed: fp16, bf16"),
        (lambda: moeval.Problem(weight_type="uint4\0b8"), r"weight type 'uint4\0b8' is not supported; allowed:"),
        (lambda: setattr(problem, "routing", "zipf\0"), r"routing 'zipf\0' is not supported; allowed:"),
        (lambda: moeval.Contract(dequant="sub_then_mul\0"), r"'sub_then_mul\0' is not supported; allowed:"),
        (lambda: moeval.Contract.parse("determinism=required\0 dequant=x"), r"'required\0'"),
        (lambda: moeval.decode(np.zeros(1, np.uint16), "bf16\0"), r"activation dtype 'bf16\0' is not supported"),
        (lambda: case.layout("awq\0"), r"layout 'awq\0' is unknown; allowed: wna16"),
        (lambda: moeval.compare(ref, ref.y16, "exact\0"), r"tier 'exact\0' is not supported; allowed: exact, bounded"),
    ]
    for call, message in calls:
        with pytest.raises(ValueError) as raised:
            call()
        assert message in str(raised.value), (message, str(raised.value))
    assert problem.routing == "softmax"  # refused, not set


def test_problems_are_equal_field_by_field_and_unhashable():
    # Problem had identity equality only: Problem(kind="gemm2") == Problem(kind="gemm2") was False.
    base = moeval.problem_fields(moeval.Problem(kind="gemm2", routing="zipf"))
    p = moeval.Problem(**base)
    assert p == moeval.Problem(**base) and not (p != moeval.Problem(**base))
    changed = dict(kind="gemm1", experts=16, tokens=3, topk=1, hidden=128, inter=64, weight_type="uint8", group_size=64,
                   act_order=True, is_k_full=False, dtype="fp16", routing="uniform", renormalize=False, zipf_exponent=2.0,
                   empty_experts=2, expert_map=list(range(8)), tier="exact", seed=9, k_shards=2, k_shard_rank=1)
    assert set(changed) == set(base)  # every field is compared
    for field, value in changed.items():
        other = moeval.Problem(**dict(base, **{field: value}))
        assert other != p and not (other == p), field
    nan = dict(base, zipf_exponent=float("nan"))
    assert moeval.Problem(**nan) == moeval.Problem(**nan)  # consistent with judge's check of a reference
    assert moeval.Problem(**nan) != p
    assert moeval.Problem(**dict(base, zipf_exponent=-0.0)) == moeval.Problem(**dict(base, zipf_exponent=0.0))
    assert (p == 5) is False and (p != "gemm2") is True
    # Mutable with value equality: unhashable, as Python's data model asks (a hash by value would
    # change when a field is set while the Problem sits in a set or keys a dict).
    with pytest.raises(TypeError, match="unhashable"):
        hash(p)


def test_a_problem_too_large_for_this_machine_is_a_memory_error_naming_it():
    # validate() bounds each array, not their sum: a problem that passes can need more memory than
    # the machine has. nanobind's own MemoryError said only "std::bad_alloc". The child runs under
    # a 3 GiB address-space limit, so the allocation fails the same way on every machine.
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        import moeval
        try:
            moeval.build_case(moeval.Problem(kind="gemm1", experts=64, hidden=4096, inter=4096))
        except MemoryError as e:
            print(e)
        """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("build_case: not enough host memory for gemm1-E64-"), run.stdout
    assert "its weights hold 2.15e+09 values" in run.stdout and "try a smaller problem" in run.stdout, run.stdout
