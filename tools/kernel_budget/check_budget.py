#!/usr/bin/env python3
"""The production kernels' registers, spills, stack and static shared memory against a committed budget.

ptxas reports each kernel's resources when it compiles it; cmake/ptxas-launcher.sh, the compiler
launcher of the kernel library's CUDA objects, saves that report beside each object
(<object>.ptxas). This script reads the reports of the objects a build lists (CMake passes
$<TARGET_OBJECTS:...>, so a report of an object no longer built is never read) and holds them to the budget file
(kernels/resource-budget.tsv), so that a change which makes a kernel spill, or take registers that
cost it occupancy, fails the cpu tier on a machine without a GPU, where the speed itself cannot be
measured. Exit status: 0 within budget, 1 over it (or the budget and the build disagree on which
kernels exist), 2 bad usage or unreadable input, 77 nothing to check here (ctest's SKIP_RETURN_CODE:
no kernel compiled to SASS in the build, or another nvcc release than the budget's, whose code
generation differs).

    check_budget.py --objects A.o,B.o --sources kernels --budget kernels/resource-budget.tsv --nvcc-version 13.0.88
    check_budget.py ... --update      # rewrite the budget from the build (after a deliberate change)
ctest runs the check (kernel_resource_budget); `cmake --build build --target update_kernel_resource_budget`
runs the update with the same arguments.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path

SKIP = 77
COLUMNS = ("registers", "spill_stores", "spill_loads", "stack", "smem", "barriers")


@dataclass(frozen=True)
class Resources:
    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    stack: int = 0
    smem: int = 0
    barriers: int = 0

    def worst(self, other: "Resources") -> "Resources":
        return Resources(*(max(getattr(self, f.name), getattr(other, f.name)) for f in fields(Resources)))


class InputError(Exception):
    """A report or the budget cannot be read as this script expects."""


_ENTRY = re.compile(r"^ptxas info\s*: Compiling entry function '([^']+)' for '(sm_\w+)'")
_PROPERTIES = re.compile(r"^ptxas info\s*: Function properties for (\S+)")
_FRAME = re.compile(r"^\s+(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"^ptxas info\s*: Used (\d+) registers(.*)$")


def parse_report(text: str, source: str) -> dict[tuple[str, str], Resources]:
    """(arch, mangled kernel) -> resources, from one object's ptxas -v lines.

    An entry function's block: "Compiling entry function 'K' for 'sm_90'", "Function properties
    for K", the stack frame line, "Used N registers, used B barriers[, S bytes smem][, ...]".
    A non-entry function (not inlined) has properties of its own, before or inside its caller's
    block: those count toward no kernel here (ptxas adds its stack into the caller's cumulative
    stack size).
    """
    kernels: dict[tuple[str, str], Resources] = {}
    pending: tuple[str, str] | None = None  # the entry whose "Used" line is still to come
    properties_of: str | None = None        # the function the next stack frame line belongs to
    frame: tuple[int, int, int] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if m := _ENTRY.match(line):
            pending, properties_of, frame = (m.group(2), m.group(1)), None, None
        elif m := _PROPERTIES.match(line):
            properties_of = m.group(1)
        elif m := _FRAME.match(line):
            if pending is not None and properties_of == pending[1]:
                frame = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif m := _USED.match(line):
            if pending is None:
                continue
            if frame is None:
                raise InputError(f"{source}:{number}: 'Used ... registers' for {pending[1]} without its stack frame line")
            rest = m.group(2)
            barriers = re.search(r"used (\d+) barriers", rest)
            smem = re.search(r"(\d+) bytes smem", rest)
            got = Resources(registers=int(m.group(1)), stack=frame[0], spill_stores=frame[1], spill_loads=frame[2],
                            smem=int(smem.group(1)) if smem else 0, barriers=int(barriers.group(1)) if barriers else 0)
            kernels[pending] = kernels[pending].worst(got) if pending in kernels else got
            pending, frame = None, None
    return kernels


def scoped_enums(source_dir: Path) -> dict[str, list[str]]:
    """enum class name -> its members in order, for the enums declared without explicit values in the
    headers below source_dir (the demangler prints an enum template argument as (Name)2)."""
    enums: dict[str, list[str]] = {}
    for path in sorted(list(source_dir.rglob("*.cuh")) + list(source_dir.rglob("*.h"))):
        for m in re.finditer(r"enum class (\w+)(?:\s*:\s*[\w:]+)?\s*\{([^}]*)\}", path.read_text()):
            body = re.sub(r"//[^\n]*", "", m.group(2))
            if "=" not in body:
                enums[m.group(1)] = [member.strip() for member in body.split(",") if member.strip()]
    return enums


def demangle(names: list[str], enums: dict[str, list[str]] | None = None) -> dict[str, str]:
    """Mangled -> readable kernel name (c++filt; the namespaces and the parameter list left out, enum
    template arguments by name where `enums` knows them)."""
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise InputError(f"c++filt (binutils) could not demangle the kernel names: {e}") from e
    readable = out.splitlines()
    if len(readable) != len(names):
        raise InputError("c++filt returned another number of lines than names given")
    result = {}
    for mangled, name in zip(names, readable):
        name = name.removeprefix("void ")
        name = re.sub(r"\bmoeval::kernels::(detail::)?", "", name)
        name = re.sub(r"\((\w+)\)(\d+)",
                      lambda m: f"{m.group(1)}::{enums[m.group(1)][int(m.group(2))]}"
                      if enums and m.group(1) in enums and int(m.group(2)) < len(enums[m.group(1)]) else m.group(0),
                      name)
        if name.endswith(")"):  # the parameter list: the template arguments name the instance
            depth = 0
            for i in range(len(name) - 1, -1, -1):
                depth += {")": 1, "(": -1}.get(name[i], 0)
                if depth == 0:
                    name = name[:i]
                    break
        result[mangled] = name
    return result


def gather(objects: list[Path], enums: dict[str, list[str]] | None = None,
           notes: list[str] | None = None) -> dict[tuple[str, str], Resources]:
    """(arch, readable kernel) -> resources over the reports (<object>.ptxas) of `objects`.

    A kernel in several objects (a template instantiated in more than one file, or kernels of one
    name in anonymous namespaces) counts with the worst of its reports, and `notes` says so. Two
    different kernels whose readable names coincide are an error: one row would hide the other.
    """
    mangled: dict[tuple[str, str], Resources] = {}
    sources: dict[tuple[str, str], list[str]] = {}
    for obj in objects:
        path = obj.with_name(obj.name + ".ptxas")
        try:
            text = path.read_text()
        except FileNotFoundError as e:
            raise InputError(f"{obj}: no ptxas report beside it ({path.name}); was it compiled without "
                             "cmake/ptxas-launcher.sh, or not built yet?") from e
        except OSError as e:
            raise InputError(f"{path}: {e.strerror}") from e
        parsed = parse_report(text, str(path))
        if not parsed and "Compiling entry function" in text:
            raise InputError(f"{path}: names entry functions but no kernel's resources could be read from it "
                             "(has ptxas changed the wording of its -v report?)")
        for key, res in parsed.items():
            mangled[key] = mangled[key].worst(res) if key in mangled else res
            sources.setdefault(key, []).append(obj.name)
    names = demangle(sorted({k for _, k in mangled}), enums) if mangled else {}
    readable: dict[tuple[str, str], Resources] = {}
    origin: dict[tuple[str, str], str] = {}
    for (arch, kernel), res in sorted(mangled.items()):
        key = (arch, names[kernel])
        if key in origin:
            raise InputError(f"two kernels read as one budget row '{arch} {key[1]}': {origin[key]} and {kernel}; "
                             "rename one, or keep the namespace that tells them apart in check_budget.demangle")
        origin[key] = kernel
        readable[key] = res
        if notes is not None and len(sources[(arch, kernel)]) > 1:
            notes.append(f"in {len(sources[(arch, kernel)])} objects ({', '.join(sources[(arch, kernel)])}), "
                         f"held with the worst of them: {arch} {key[1]}")
    return readable


def read_budget(path: Path) -> tuple[str, dict[tuple[str, str], Resources]]:
    """(nvcc release the budget was taken with, (arch, kernel) -> budget)."""
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from e
    toolchain = ""
    budget: dict[tuple[str, str], Resources] = {}
    for number, line in enumerate(lines, 1):
        if m := re.match(r"^# nvcc (\S+)$", line):
            toolchain = m.group(1)
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) != 2 + len(COLUMNS) or not all(c.isdigit() for c in cells[2:]):
            raise InputError(f"{path}:{number}: expected arch, kernel and {len(COLUMNS)} whole numbers "
                             f"({', '.join(COLUMNS)}) separated by tabs")
        key = (cells[0], cells[1])
        if key in budget:
            raise InputError(f"{path}:{number}: {cells[0]} {cells[1]} is listed twice")
        budget[key] = Resources(*(int(c) for c in cells[2:]))
    if not toolchain:
        raise InputError(f"{path}: no '# nvcc <release>' line (the toolchain the budget was taken with)")
    return toolchain, budget


def write_budget(path: Path, toolchain: str, kernels: dict[tuple[str, str], Resources]) -> None:
    """The budget file, written whole (a temp file renamed over it) or not at all. The caller keeps the
    rows of archs this build has no SASS for (see main)."""
    header = [
        "# Registers, spills, stack and static shared memory (bytes) of every production kernel as ptxas",
        "# reports them (cmake/ptxas-launcher.sh), the budget the cpu tier's kernel_resource_budget test holds",
        "# the build to: more of any column fails it, and so does a kernel missing here or gone from the",
        "# build. After a deliberate change, regenerate it and review its diff beside the change:",
        "#   cmake --build build --target update_kernel_resource_budget",
        f"# nvcc {toolchain}",
        "# arch\tkernel\t" + "\t".join(COLUMNS),
    ]
    rows = ["\t".join([arch, kernel] + [str(getattr(res, c)) for c in COLUMNS])
            for (arch, kernel), res in sorted(kernels.items())]
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(header + rows) + "\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def compare(built: dict[tuple[str, str], Resources], budget: dict[tuple[str, str], Resources]) -> tuple[list[str], list[str]]:
    """(failures, notes). Only the archs that have reports in this build are held to the budget."""
    failures, notes = [], []
    built_archs = {arch for arch, _ in built}
    budget_archs = {arch for arch, _ in budget}
    for key in sorted(built):
        arch, kernel = key
        if arch not in budget_archs:
            notes.append(f"not budgeted: {arch} (no row for this arch) {kernel}")
            continue
        if key not in budget:
            failures.append(f"{arch} {kernel}: built but not in the budget (a new kernel: review its resources, "
                            f"then --update) — {format_resources(built[key])}")
            continue
        over = [f"{c} {getattr(built[key], c)} > {getattr(budget[key], c)}" for c in COLUMNS
                if getattr(built[key], c) > getattr(budget[key], c)]
        under = [f"{c} {getattr(built[key], c)} < {getattr(budget[key], c)}" for c in COLUMNS
                 if getattr(built[key], c) < getattr(budget[key], c)]
        if over:
            failures.append(f"{arch} {kernel}: over budget: {', '.join(over)}")
        if under:
            notes.append(f"under budget (tighten it with --update): {arch} {kernel}: {', '.join(under)}")
    for key in sorted(budget):
        if key[0] in built_archs and key not in built:
            failures.append(f"{key[0]} {key[1]}: in the budget but not built (a kernel removed or renamed: --update)")
    for arch in sorted(budget_archs - built_archs):
        rows = sum(1 for a, _ in budget if a == arch)
        notes.append(f"not checked: the {rows} {arch} rows of the budget (this build has no {arch} SASS)")
    return failures, notes


def format_resources(res: Resources) -> str:
    return ", ".join(f"{c} {getattr(res, c)}" for c in COLUMNS)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", required=True,
                        help="the kernel objects of the build, comma-separated; each one's report is <object>.ptxas")
    parser.add_argument("--budget", type=Path, required=True, help="the budget file (kernels/resource-budget.tsv)")
    parser.add_argument("--nvcc-version", required=True, help="the release of the nvcc that built the reports")
    parser.add_argument("--sources", type=Path, help="the kernels' source folder: its enum classes name enum "
                        "template arguments (QuantMode::zero_point, not (QuantMode)1)")
    parser.add_argument("--update", action="store_true", help="rewrite the budget from the reports")
    args = parser.parse_args(argv)
    try:
        objects = [Path(o) for o in args.objects.split(",") if o]
        if not objects:
            raise InputError("--objects lists no object")
        gather_notes: list[str] = []
        built = gather(objects, scoped_enums(args.sources) if args.sources else None, gather_notes)
        if args.update:
            if not built:
                raise InputError(f"the reports of the {len(objects)} objects name no kernel compiled to SASS: "
                                 "nothing to write (update from a build with SASS, such as the default preset's)")
            kept: dict[tuple[str, str], Resources] = {}
            if args.budget.exists():  # the rows of archs this build has no SASS for stay as they were
                old_toolchain, old = read_budget(args.budget)
                built_archs = {a for a, _ in built}
                kept = {k: r for k, r in old.items() if k[0] not in built_archs}
                if kept and old_toolchain != args.nvcc_version:
                    raise InputError(f"the budget's {len(kept)} rows of other archs were taken with nvcc "
                                     f"{old_toolchain}, this build used {args.nvcc_version}: update from a build "
                                     "with SASS for every arch of the budget")
            write_budget(args.budget, args.nvcc_version, {**kept, **built})
            print(f"kernel_resource_budget: wrote {len(built)} kernels to {args.budget} (nvcc {args.nvcc_version})"
                  + (f"; kept {len(kept)} rows of archs without SASS here" if kept else ""))
            return 0
        if not built:
            print(f"kernel_resource_budget: SKIPPED: the reports of the {len(objects)} objects name no kernel "
                  "compiled to SASS (a PTX-only build): nothing checked")
            return SKIP
        toolchain, budget = read_budget(args.budget)
    except InputError as e:
        print(f"kernel_resource_budget: error: {e}", file=sys.stderr)
        return 2
    if toolchain != args.nvcc_version:
        print(f"kernel_resource_budget: SKIPPED: the budget was taken with nvcc {toolchain}, this build used "
              f"{args.nvcc_version}; ptxas allocates differently across releases, so nothing is checked "
              "(regenerate the budget with --update on this toolchain to check against it)")
        return SKIP
    failures, notes = compare(built, budget)
    notes = gather_notes + notes
    for line in notes:
        print(f"note: {line}")
    for line in failures:
        print(f"FAIL: {line}")
    archs = ", ".join(sorted({a for a, _ in built}))
    spilling = sorted(k for k, r in built.items() if r.spill_stores or r.spill_loads)
    print(f"kernel_resource_budget: {len(built)} kernels ({archs}); {len(failures)} over or out of budget; "
          f"{len(spilling)} spill within their budget" if not failures else
          f"kernel_resource_budget: {len(failures)} failures ({len(built)} kernels built on {archs})")
    for arch, kernel in spilling:
        r = built[(arch, kernel)]
        print(f"  spills: {arch} {kernel}: {r.spill_stores} bytes stored, {r.spill_loads} loaded, {r.registers} registers")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
