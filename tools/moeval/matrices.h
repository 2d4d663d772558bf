// The named matrices of `moeval check` (--matrix quick|standard|full), expanded into jobs: every
// GEMM problem on every registered kernel (a kernel that cannot run a case reports it SKIPPED with
// its reason), every layer problem on its weight format, and the golden families.
//
//   quick     a few cases per kernel and one layer per format: seconds on a GPU; CI and pre-commit
//   standard  the default: every weight type × dtype × group × GEMM × tier at a small shape,
//             act-order × is_k_full (a real K shard included), expert parallelism, E from 1 to 512,
//             M from 1 to 4096, every routing distribution, and the whole layer on both formats
//   full      the product of every scheme with small, decode and prefill shapes, and the expert-
//             parallel ranks of DeepSeek-V3, Qwen3-30B-A3B and Mixtral-8x7B at their real H and I
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "check_job.h"

namespace moeval::cli {

enum class MatrixName { quick, standard, full };

std::string_view to_string(MatrixName name);
// Throws UsageError "--matrix: 'x' is unknown; allowed: quick, standard, full".
MatrixName parse_matrix_name(std::string_view text);

struct MatrixOptions {
  MatrixName name = MatrixName::standard;
  int seeds = 1;                     // each GEMM and layer problem with seeds base, base + 1, ...
  std::vector<std::string> kernels;  // registered GEMM kernels, in registry order
  bool golden = true;                // include the golden families (CPU)
  // `moeval sweep`: every GEMM case (each seed) is a cross-device job, run on every device of the
  // run with bitwise agreement, instead of a job on one device plus the few cross-device jobs.
  bool every_device = false;
};

// The jobs in a fixed order (golden families; each GEMM case on every kernel in turn; layer
// cases), each id once, `index` = position.
std::vector<Job> build_jobs(const MatrixOptions& options);

}  // namespace moeval::cli
