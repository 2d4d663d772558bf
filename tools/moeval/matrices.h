// The named matrices of `moeval check` and `moeval sweep` (--matrix), expanded into jobs: every
// GEMM problem on every registered kernel (a kernel that cannot run a case reports it SKIPPED with
// its reason), every layer problem on its weight format, and the golden families. The matrices
// themselves (quick, standard, full, and the external suites' default and smoke) are the testbed's
// one registry: moeval/testbed/matrices.h says what each holds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "check_job.h"

namespace moeval::cli {

// core is the registry's "default" (a C++ keyword).
enum class MatrixName { quick, standard, full, core, smoke };

std::string_view to_string(MatrixName name);
// Throws UsageError "--matrix: 'x' is unknown; allowed: quick, standard, full, default, smoke".
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
