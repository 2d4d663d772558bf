"""The CUDA build's entry points that take a device index, on any machine: without a usable device
each raises one RuntimeError naming itself and why (without the driver: that the driver is not
installed, never CUDA's "driver version is insufficient"); with devices, an index past the last
one is a ValueError naming the allowed range. Needs no torch. Skips on a CPU-only build."""

import numpy as np
import pytest

import moeval

if not moeval.has_cuda:
    pytest.skip("the package was built without CUDA (MOEVAL_PY_CUDA=OFF)", allow_module_level=True)
import moeval.cuda as mc  # noqa: E402


def entry_points(device):
    gemm = moeval.Problem(kind="gemm1")
    return {
        "GuardedBuffer": lambda: mc.GuardedBuffer("out", device, 64),
        "GuardedBuffer.upload": lambda: mc.GuardedBuffer.upload("a", device, np.zeros(8, np.uint16)),
        "run_builtin": lambda: mc.run_builtin("wna16_moe", gemm, device),
        "cublas_reference": lambda: mc.cublas_reference(moeval.build_case(gemm), device),
    }


@pytest.mark.parametrize("who", list(entry_points(0)))
def test_without_a_device_each_entry_point_says_why(who):
    if mc.devices() > 0:
        pytest.skip(f"{mc.devices()} device(s) visible: the no-device answer cannot be seen here")
    reason = moeval._moeval.no_device_reason()
    assert reason
    with pytest.raises(RuntimeError) as raised:
        entry_points(0)[who]()
    assert str(raised.value) == f"{who}: {reason}"
    assert "insufficient" not in str(raised.value)


def test_without_a_device_check_says_why():
    if mc.devices() > 0:
        pytest.skip(f"{mc.devices()} device(s) visible: the no-device answer cannot be seen here")
    with pytest.raises(RuntimeError, match="^moeval.cuda.check: ") as raised:
        mc.check(lambda inputs, out, info: None, "smoke", echo=False)
    assert str(raised.value) == "moeval.cuda.check: " + moeval._moeval.no_device_reason()


@pytest.mark.parametrize("who", list(entry_points(0)))
def test_a_device_past_the_last_is_refused_with_the_range(who):
    count = mc.devices()
    if count == 0:
        pytest.skip(moeval._moeval.no_device_reason())
    with pytest.raises(ValueError, match=rf"^{who}: device {count} does not exist; allowed: 0\.\.{count - 1}$"):
        entry_points(count)[who]()
