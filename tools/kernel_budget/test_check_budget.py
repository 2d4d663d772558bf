"""Tests of check_budget.py (the cpu tier runs them: ctest kernel_budget_script_tests)."""
import io
import os
import subprocess
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import check_budget as cb

# Two kernels of one object as ptxas -v prints them, with a non-entry function's properties between.
REPORT = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_ZN6moeval7kernels6detail3fooILi4EEEvi' for 'sm_90'
ptxas info    : Function properties for _ZN6moeval7kernels6detail3fooILi4EEEvi
    16 bytes stack frame, 24 bytes spill stores, 20 bytes spill loads
ptxas info    : Used 168 registers, used 2 barriers, 16 bytes cumulative stack size
ptxas info    : Compile time = 10.0 ms
ptxas info    : Function properties for _Z6helperv
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Compiling entry function '_Z3barv' for 'sm_90'
ptxas info    : Function properties for _Z3barv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 30 registers, used 1 barriers, 128 bytes smem, 380 bytes cmem[0]
"""


class ParseReport(unittest.TestCase):
    def test_entries_with_their_own_frame_lines(self):
        got = cb.parse_report(REPORT, "x.o.ptxas")
        self.assertEqual(got[("sm_90", "_ZN6moeval7kernels6detail3fooILi4EEEvi")],
                         cb.Resources(registers=168, spill_stores=24, spill_loads=20, stack=16, smem=0, barriers=2))
        self.assertEqual(got[("sm_90", "_Z3barv")], cb.Resources(registers=30, smem=128, barriers=1))
        self.assertEqual(len(got), 2, "a non-entry function is no kernel")

    def test_a_helpers_properties_inside_an_entrys_block_count_toward_no_kernel(self):
        # A non-inlined function's properties between the entry's own lines and its "Used" line.
        lines = REPORT.splitlines()
        helper = [i for i, line in enumerate(lines) if "_Z6helperv" in line][0]
        moved = lines[:4] + lines[helper:helper + 2] + lines[4:helper] + lines[helper + 2:]
        got = cb.parse_report("\n".join(moved), "x.o.ptxas")
        self.assertEqual(got, cb.parse_report(REPORT, "x.o.ptxas"))

    def test_used_line_without_frame_is_an_error(self):
        broken = "\n".join(line for line in REPORT.splitlines() if "spill stores, 0 bytes" not in line)
        with self.assertRaisesRegex(cb.InputError, r"x.o.ptxas:\d+: 'Used ... registers' for _Z3barv"):
            cb.parse_report(broken, "x.o.ptxas")

    def test_demangle_leaves_out_namespaces_and_parameters_and_names_enums(self):
        names = cb.demangle(["_ZN6moeval7kernels6detail3fooILNS1_4ModeE1EEEvi"], {"Mode": ["plain", "zero_point"]})
        self.assertEqual(names["_ZN6moeval7kernels6detail3fooILNS1_4ModeE1EEEvi"], "foo<Mode::zero_point>")


class Compare(unittest.TestCase):
    A = ("sm_90", "k<1>")
    B = ("sm_90", "k<2>")

    def test_within_budget_passes_and_under_budget_is_a_note(self):
        failures, notes = cb.compare({self.A: cb.Resources(registers=90)}, {self.A: cb.Resources(registers=96)})
        self.assertEqual(failures, [])
        self.assertIn("registers 90 < 96", notes[0])

    def test_more_of_any_column_fails(self):
        for column in cb.COLUMNS:
            built = cb.Resources(**{column: 5})
            failures, _ = cb.compare({self.A: built}, {self.A: cb.Resources(**{column: 4})})
            self.assertEqual(len(failures), 1, column)
            self.assertIn(f"{column} 5 > 4", failures[0])

    def test_a_kernel_new_or_gone_fails(self):
        failures, _ = cb.compare({self.A: cb.Resources()}, {self.B: cb.Resources()})
        self.assertEqual(len(failures), 2)
        self.assertIn("built but not in the budget", failures[0])
        self.assertIn("in the budget but not built", failures[1])

    def test_an_arch_without_reports_is_not_held_to_the_budget(self):
        failures, notes = cb.compare({self.A: cb.Resources()}, {self.A: cb.Resources(), ("sm_90a", "w"): cb.Resources()})
        self.assertEqual(failures, [])
        self.assertIn("not checked: the 1 sm_90a rows of the budget", notes[0])
        failures, notes = cb.compare({("sm_80", "k<1>"): cb.Resources()}, {self.A: cb.Resources()})
        self.assertEqual(failures, [])
        self.assertIn("not budgeted: sm_80", notes[0])


class Main(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        root = Path(self.dir.name)
        (root / "sub").mkdir()
        self.object = root / "sub" / "x.cu.o"
        self.report = root / "sub" / "x.cu.o.ptxas"
        self.report.write_text(REPORT)
        # A report beside an object the build no longer lists: never read.
        (root / "sub" / "gone.cu.o.ptxas").write_text(REPORT.replace("_Z3barv", "_Z4gonev"))
        self.budget = root / "budget.tsv"

    def tearDown(self):
        self.dir.cleanup()

    def run_main(self, *extra, version="13.0.88"):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = cb.main(["--objects", getattr(self, "object_list", str(self.object)), "--budget", str(self.budget),
                              "--nvcc-version", version, *extra])
        return status, out.getvalue() + err.getvalue()

    def test_update_then_check_passes_and_a_new_spill_fails(self):
        self.assertEqual(self.run_main("--update")[0], 0)
        self.assertEqual(list(self.budget.parent.glob("*.tmp")), [], "no temp file left")
        self.assertIn("# nvcc 13.0.88", self.budget.read_text())
        self.assertNotIn("\tgone", self.budget.read_text(), "only the listed objects' reports are read")
        self.assertEqual(self.run_main()[0], 0)
        self.report.write_text(REPORT.replace("24 bytes spill stores", "32 bytes spill stores"))
        status, out = self.run_main()
        self.assertEqual(status, 1)
        self.assertIn("spill_stores 32 > 24", out)

    def test_another_toolchain_or_no_sass_skips(self):
        self.assertEqual(self.run_main("--update")[0], 0)
        status, out = self.run_main(version="12.9.41")
        self.assertEqual(status, cb.SKIP)
        self.assertIn("taken with nvcc 13.0.88, this build used 12.9.41", out)
        self.report.write_text("")  # the launcher's report of a PTX-only compile
        status, out = self.run_main()
        self.assertEqual(status, cb.SKIP)
        self.assertIn("name no kernel compiled to SASS", out)

    def test_an_object_without_report_is_one_clear_error(self):
        self.report.unlink()
        status, out = self.run_main()
        self.assertEqual(status, 2)
        self.assertIn("x.cu.o: no ptxas report beside it (x.cu.o.ptxas)", out)

    def test_update_keeps_the_rows_of_archs_without_sass_here_and_needs_some_sass(self):
        self.budget.write_text("# nvcc 13.0.88\nsm_80\told<1>\t40\t0\t0\t0\t0\t1\n")
        self.assertEqual(self.run_main("--update")[0], 0)
        self.assertIn("sm_80\told<1>\t40", self.budget.read_text())
        self.assertIn("sm_90\tbar\t30", self.budget.read_text())
        self.report.write_text("")
        status, out = self.run_main("--update")
        self.assertEqual(status, 2)
        self.assertIn("nothing to write", out)

    def test_two_kernels_one_name_is_an_error_and_one_kernel_in_two_objects_a_note(self):
        twins = REPORT.replace("_Z3barv", "_ZN6moeval7kernels3fooILi4EEEvi")  # foo<4> outside detail::
        self.report.write_text(twins)
        status, out = self.run_main("--update")
        self.assertEqual(status, 2)
        self.assertIn("two kernels read as one budget row 'sm_90 foo<4>'", out)
        self.report.write_text(REPORT)
        other = self.object.with_name("y.cu.o")
        other.with_name("y.cu.o.ptxas").write_text(REPORT.replace("Used 30 registers", "Used 40 registers"))
        self.object_list = f"{self.object},{other}"
        self.assertEqual(self.run_main("--update")[0], 0)
        self.assertIn("sm_90\tbar\t40", self.budget.read_text(), "the worst of the two reports")
        status, out = self.run_main()
        self.assertEqual(status, 0)
        self.assertIn("in 2 objects (x.cu.o, y.cu.o), held with the worst of them: sm_90 bar", out)

    def test_a_report_in_another_wording_is_an_error_not_a_skip(self):
        self.assertEqual(self.run_main("--update")[0], 0)
        self.report.write_text(REPORT.replace("ptxas info    : Used", "ptxas info    : Uses"))
        status, out = self.run_main()
        self.assertEqual(status, 2)
        self.assertIn("no kernel's resources could be read", out)

    def test_a_malformed_budget_is_one_clear_error(self):
        self.budget.write_text("# nvcc 13.0.88\nsm_90\tk\t1\t2\n")
        status, out = self.run_main()
        self.assertEqual(status, 2)
        self.assertIn("budget.tsv:2: expected arch, kernel and 6 whole numbers", out)
        self.budget.write_text("sm_90\t_Z3barv\t30\t0\t0\t0\t128\t1\n")
        status, out = self.run_main()
        self.assertEqual(status, 2)
        self.assertIn("no '# nvcc <release>' line", out)
        self.budget.unlink()
        status, out = self.run_main()
        self.assertEqual(status, 2)
        self.assertIn("No such file", out)


LAUNCHER = Path(__file__).resolve().parents[2] / "cmake" / "ptxas-launcher.sh"


class Launcher(unittest.TestCase):
    """cmake/ptxas-launcher.sh around a stand-in compiler that prints what ptxas -v would."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        root = Path(self.dir.name)
        self.compiler = root / "fake-nvcc"
        # Prints $FAKE_STDERR to stderr, creates the object after -o, exits $FAKE_STATUS; records its args.
        self.compiler.write_text('#!/bin/sh\nprintf "%s\\n" "$*" > "$FAKE_ARGS"\nprintf "%s" "$FAKE_STDERR" >&2\n'
                                 'prev=""; for a in "$@"; do [ "$prev" = "-o" ] && : > "$a"; prev=$a; done\n'
                                 'exit "${FAKE_STATUS:-0}"\n')
        self.compiler.chmod(0o755)
        self.object = root / "k.cu.o"
        self.args = root / "args"

    def tearDown(self):
        self.dir.cleanup()

    def launch(self, stderr, status=0, *extra):
        env = dict(os.environ, FAKE_STDERR=stderr, FAKE_STATUS=str(status), FAKE_ARGS=str(self.args))
        return subprocess.run(["bash", str(LAUNCHER), str(self.compiler), "-c", "k.cu", "-o", str(self.object), *extra],
                              capture_output=True, text=True, env=env)

    def report(self):
        return self.object.with_name("k.cu.o.ptxas")

    def test_report_beside_the_object_and_the_rest_passed_through(self):
        r = self.launch(REPORT + "k.cu(3): warning: something\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("-Xptxas=-v", self.args.read_text())
        self.assertEqual(self.report().read_text(), REPORT)
        self.assertEqual(r.stderr, "k.cu(3): warning: something\n")
        self.assertEqual(cb.parse_report(self.report().read_text(), "k"), cb.parse_report(REPORT, "k"))

    def test_a_failed_compile_keeps_its_status_and_leaves_no_old_report(self):
        self.assertEqual(self.launch(REPORT).returncode, 0)
        r = self.launch("k.cu(1): error: oops\n", 2)
        self.assertEqual(r.returncode, 2)
        self.assertIn("error: oops", r.stderr)
        self.assertFalse(self.report().exists())

    def test_serialized_wgmma_fails_and_leaves_neither_object_nor_report(self):
        lines = REPORT.splitlines(keepends=True)  # the info line inside foo's block, as ptxas prints it
        serialized = "".join(lines[:2]) + ("ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async "
                                           "instructions are serialized due to ...\n") + "".join(lines[2:])
        r = self.launch(serialized)
        self.assertEqual(r.returncode, 1)
        self.assertIn("Compiling entry function '_ZN6moeval7kernels6detail3fooILi4EEEvi'", r.stderr)
        self.assertNotIn("_Z3barv", r.stderr, "only the kernel whose wgmma were serialized is named")
        self.assertIn("instructions are serialized", r.stderr)
        self.assertFalse(self.object.exists())
        self.assertFalse(self.report().exists())

    def test_no_sass_gives_an_empty_report(self):
        self.assertEqual(self.launch("").returncode, 0)
        self.assertEqual(self.report().read_text(), "")


class ScopedEnums(unittest.TestCase):
    def test_members_in_order_and_enums_with_values_left_out(self):
        with tempfile.TemporaryDirectory() as d:
            Path(d, "a.cuh").write_text("enum class QuantMode { symmetric, zero_point,  // z\n k_shard };\n"
                                        "enum class Flags : int { a = 1, b = 2 };\n")
            self.assertEqual(cb.scoped_enums(Path(d)), {"QuantMode": ["symmetric", "zero_point", "k_shard"]})


if __name__ == "__main__":
    unittest.main()
