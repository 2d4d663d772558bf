"""The CUDA build's entry points that take a device index, on any machine: without a usable device
each raises one RuntimeError naming itself and why (without the driver: that the driver is not
installed, never CUDA's "driver version is insufficient"); with devices, an index past the last
one is a ValueError naming the allowed range. The no-device half runs in a child process that sees
no device (CUDA_VISIBLE_DEVICES empty), so it runs on a GPU machine too. Needs no torch; skips on a
CPU-only build."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import moeval

if not moeval.has_cuda:
    pytest.skip("the package was built without CUDA (MOEVAL_PY_CUDA=OFF)", allow_module_level=True)
import moeval.cuda as mc  # noqa: E402

# Each entry point, called with device index DEVICE (the child and the parent share this text).
ENTRY_POINTS = textwrap.dedent("""
    import numpy as np
    import moeval
    import moeval.cuda as mc

    def entry_points(device):
        gemm = moeval.Problem(kind="gemm1")
        return {
            "GuardedBuffer": lambda: mc.GuardedBuffer("out", device, 64),
            "GuardedBuffer.upload": lambda: mc.GuardedBuffer.upload("a", device, np.zeros(8, np.uint16)),
            "run_builtin": lambda: mc.run_builtin("wna16_moe", gemm, device),
            "run_python": lambda: moeval._moeval.run_python(lambda i, o, f: None, gemm, device, "wna16",
                                                            moeval.Contract(), 0, "noop", None),
            "cublas_reference": lambda: mc.cublas_reference(moeval.build_case(gemm), device),
        }
    """)
NAMES = ["GuardedBuffer", "GuardedBuffer.upload", "run_builtin", "run_python", "cublas_reference"]


@pytest.fixture(scope="module")
def without_a_device():
    """What each entry point raised in a child that sees no device: {name: [type, message]},
    plus the child's no-device reason and device count."""
    script = ENTRY_POINTS + textwrap.dedent("""
        import json
        out = {"count": mc.devices(), "reason": moeval._moeval.no_device_reason()}
        for who, call in entry_points(0).items():
            try:
                call()
                out[who] = ["returned", ""]
            except Exception as e:
                out[who] = [type(e).__name__, str(e)]
        try:
            mc.check(lambda inputs, output, info: None, "smoke", echo=False)
            out["check"] = ["returned", ""]
        except Exception as e:
            out["check"] = [type(e).__name__, str(e)]
        print(json.dumps(out))
        """)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_the_child_sees_no_device_and_says_why(without_a_device):
    assert without_a_device["count"] == 0
    assert without_a_device["reason"]


@pytest.mark.parametrize("who", NAMES)
def test_without_a_device_each_entry_point_says_why(without_a_device, who):
    reason = without_a_device["reason"]
    assert without_a_device[who] == ["RuntimeError", f"{who}: {reason}"]
    if "driver is not installed" in reason:  # no driver: never "driver version is insufficient"
        assert "insufficient" not in without_a_device[who][1]


def test_without_a_device_check_says_why(without_a_device):
    assert without_a_device["check"] == ["RuntimeError", "moeval.cuda.check: " + without_a_device["reason"]]


@pytest.mark.parametrize("who", NAMES)
def test_a_device_past_the_last_is_refused_with_the_range(who):
    count = mc.devices()
    if count == 0:
        pytest.skip(moeval._moeval.no_device_reason())
    namespace = {}
    exec(ENTRY_POINTS, namespace)
    with pytest.raises(ValueError, match=rf"^{who}: device {count} does not exist; allowed: 0\.\.{count - 1}$"):
        namespace["entry_points"](count)[who]()
