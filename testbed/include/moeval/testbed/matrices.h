// The one registry of named matrices: what `moeval check --matrix` and `moeval sweep --matrix`,
// the CMake function moeval_add_kernel_tests (MATRIX) and the Python package (moeval.matrix,
// the pytest plugin's --moeval-matrix) run a kernel over. Pure host code (no device).
//
//   quick     seconds: per kernel a 4-bit and an 8-bit type, both zero-point types, channelwise,
//             act-order, a K shard, one token on one expert, an expert-parallel rank; a layer per
//             format (what CI and a pre-commit hook run)
//   standard  `moeval check`'s default: "default" below plus the ends of every axis (E 1 to 512,
//             M 1 to 4096, every routing, expert parallelism, act-order at every group) and layers
//   full      every scheme at small, decode and prefill shapes, DeepSeek-V3 / Qwen3-30B-A3B /
//             Mixtral-8x7B as expert-parallel ranks and at their real size, more layers
//   default   the GEMM core of standard: every weight type × dtype × group size × GEMM × tier at a
//             small shape, Marlin's act-order × is_k_full (a real K shard included) × dtype, and
//             E = 512 (kept by this name for the external suites that named it first)
//   smoke     a few seconds on a CPU: every weight type × dtype on both GEMMs, bounded tier at group
//             128 (zero-point types at group 32), one exact-tier case per GEMM, an expert-parallel map
//             (the default of the CMake function and the pytest plugin)
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "moeval/fixtures/problem.h"

namespace moeval::testbed {

// One problem of a matrix before it meets kernels and seeds: its shape label (the `shape` key of
// the CLI's --filter), and for a layer the weight format (a bool, not the kernels' enum, so that
// this header needs no CUDA header: Python and CPU-only consumers include it).
struct MatrixEntry {
  std::string shape;
  MoeProblem problem;
  bool layer = false;
  bool marlin = false;  // a layer on Marlin-format weights (else WNA16)
};

// {"quick", "standard", "full", "default", "smoke"}.
std::vector<std::string> matrix_names();

// The entries of a named matrix, in a fixed order. Throws std::invalid_argument naming the matrix
// and the known ones.
std::vector<MatrixEntry> matrix_entries(std::string_view name);

// The GEMM problems of a named matrix (its layers left out): what a GEMM kernel's suite runs.
std::vector<MoeProblem> gemm_matrix(std::string_view name);
// The same names as matrix_names().
std::vector<std::string> gemm_matrix_names();

}  // namespace moeval::testbed
