"""The pytest plugin in a fresh session: --moeval-matrix parametrises moeval_case, and a bad
matrix name is a usage error."""

import moeval

TEST_FILE = """
def test_case(moeval_case):
    assert moeval_case.problem.name
"""


def test_moeval_matrix_parametrises_moeval_case(pytester):
    pytester.makepyfile(TEST_FILE)
    result = pytester.runpytest("--moeval-matrix", "smoke", "-q")
    result.assert_outcomes(passed=len(moeval.matrix("smoke")))


def test_unknown_matrix_is_a_usage_error(pytester):
    pytester.makepyfile(TEST_FILE)
    result = pytester.runpytest("--moeval-matrix", "nope")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--moeval-matrix: matrix 'nope' is unknown; known: quick, standard, full, default, smoke*"])


def test_marker_picks_another_matrix(pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.moeval_matrix("default")
def test_case(moeval_case):
    pass
""")
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines([f"{len(moeval.matrix('default'))} tests collected*"])
