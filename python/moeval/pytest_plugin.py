"""pytest plugin (entry point `pytest11`, active once the package is installed).

A test that takes the `moeval_case` fixture runs once per problem of a named matrix:

    def test_my_kernel(moeval_case):
        out = my_kernel(moeval_case)
        moeval.testing.assert_moe_close(out, moeval_case)

`--moeval-matrix NAME` picks the matrix (default "smoke"; moeval.matrix_names() lists them);
`--moeval-repro-dir DIR` says where failing cases' reproduce files go. Test ids are problem names.
"""

from __future__ import annotations

import pytest

import moeval


def pytest_addoption(parser):
    group = parser.getgroup("moeval")
    group.addoption("--moeval-matrix", default="smoke",
                    help="named matrix the moeval_case fixture runs over (default: smoke; known: "
                         + ", ".join(moeval.matrix_names()) + ")")
    group.addoption("--moeval-repro-dir", default=None,
                    help="directory for reproduce files of failing cases (default: MOEVAL_REPRO_DIR or ./moeval-repro)")


def pytest_configure(config):
    config.addinivalue_line("markers", "moeval_matrix(name): run this test's moeval_case over another named matrix")
    name = config.getoption("--moeval-matrix")
    if name not in moeval.matrix_names():
        raise pytest.UsageError(f"--moeval-matrix: matrix '{name}' is unknown; known: {', '.join(moeval.matrix_names())}")
    repro_dir = config.getoption("--moeval-repro-dir")
    if repro_dir:
        import os

        os.environ["MOEVAL_REPRO_DIR"] = repro_dir


def pytest_generate_tests(metafunc):
    if "moeval_case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("moeval_matrix")
    if marker and len(marker.args) != 1:  # a bare marker was an IndexError at collection
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.moeval_matrix takes one matrix name, "
                                f"e.g. @pytest.mark.moeval_matrix(\"{moeval.matrix_names()[0]}\"); "
                                f"known: {', '.join(moeval.matrix_names())}")
    name = marker.args[0] if marker else metafunc.config.getoption("--moeval-matrix")
    names = [p.name for p in moeval.matrix(name)]  # a marker's unknown name raises ValueError naming the known ones
    # The parameters are (matrix, index), not Problems: pytest keeps its parameters until the
    # process exits, and Problems kept so were still alive when the extension module was torn down
    # (nanobind then reports them as leaked instances). The fixture builds the problem when it runs.
    metafunc.parametrize("moeval_case", [(name, i) for i in range(len(names))], ids=names, indirect=True)


@pytest.fixture
def moeval_case(request) -> moeval.Case:
    """The built case of one problem of the matrix (see the module docstring)."""
    matrix, index = request.param
    return moeval.build_case(moeval.matrix(matrix)[index])
