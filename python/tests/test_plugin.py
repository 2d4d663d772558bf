"""The pytest plugin in a fresh session: --moeval-matrix parametrises moeval_case, and a bad
matrix name is a usage error.

Each session runs in a subprocess: a fresh interpreter, in which the plugin loads from its entry
point alone, and whose exit must print no nanobind leak report (the plugin once parametrised
moeval_case by Problem objects, which pytest keeps until exit, past the extension module's
teardown)."""

import importlib

import pytest

import moeval

TEST_FILE = """
def test_case(moeval_case):
    assert moeval_case.problem.name
"""


def test_moeval_matrix_parametrises_moeval_case(pytester):
    pytester.makepyfile(TEST_FILE)
    result = pytester.runpytest_subprocess("--moeval-matrix", "smoke", "-q")
    result.assert_outcomes(passed=len(moeval.matrix("smoke")))
    assert "nanobind: leaked" not in result.stderr.str(), result.stderr.str()


def test_unknown_matrix_is_a_usage_error(pytester):
    pytester.makepyfile(TEST_FILE)
    result = pytester.runpytest_subprocess("--moeval-matrix", "nope")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--moeval-matrix: matrix 'nope' is unknown; known: quick, standard, full, default, smoke*"])


def test_marker_picks_another_matrix(pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.moeval_matrix("default")
def test_case(moeval_case):
    pass
""")
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    result.stdout.fnmatch_lines([f"{len(moeval.matrix('default'))} tests collected*"])


def test_parameters_hold_no_problem(pytester):
    """The plugin's parameters are plain (matrix, index) pairs: a Problem held as a parameter lives
    until exit, past the extension module's teardown (a leak report with torch loaded, which this
    CPU suite does not load, so the parameters themselves are checked)."""
    items = pytester.getitems(TEST_FILE)
    assert len(items) == len(moeval.matrix("smoke"))
    for item in items:
        matrix, index = item.callspec.params["moeval_case"]
        assert (type(matrix), type(index)) == (str, int), item.callspec.params
        assert item.callspec.id == moeval.matrix(matrix)[index].name


def test_marker_without_a_matrix_is_a_usage_error(pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.moeval_matrix
def test_case(moeval_case):
    pass
""")
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*UsageError*@pytest.mark.moeval_matrix takes one matrix name*known: quick, standard, full, default, smoke*"])


def test_moeval_cuda_of_a_cpu_build_is_an_import_error():
    if moeval.has_cuda:
        pytest.skip("this is the CUDA build")
    with pytest.raises(ImportError, match="built without CUDA.*MOEVAL_PY_CUDA=ON"):
        importlib.import_module("moeval.cuda")
