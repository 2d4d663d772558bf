#include "matrices.h"

#include <set>

#include "exit_codes.h"
#include "moeval/testbed/matrices.h"

namespace moeval::cli {

std::string_view to_string(MatrixName name) {
  switch (name) {
    case MatrixName::quick: return "quick";
    case MatrixName::standard: return "standard";
    case MatrixName::full: return "full";
    case MatrixName::core: return "default";
    case MatrixName::smoke: return "smoke";
  }
  return "?";
}

MatrixName parse_matrix_name(std::string_view text) {
  for (MatrixName n : {MatrixName::quick, MatrixName::standard, MatrixName::full, MatrixName::core, MatrixName::smoke}) {
    if (text == to_string(n)) return n;
  }
  throw UsageError("--matrix: '" + std::string(text) + "' is unknown; allowed: quick, standard, full, default, smoke");
}

std::vector<Job> build_jobs(const MatrixOptions& options) {
  // The registry of matrix names is the testbed's (the CMake function and Python use it too).
  const std::vector<testbed::MatrixEntry> entries = testbed::matrix_entries(to_string(options.name));
  std::vector<Job> jobs;
  std::set<std::string> seen;
  auto add = [&](Job job) {
    if (seen.insert(job.id()).second) jobs.push_back(std::move(job));
  };
  if (options.golden) {
    for (golden::Family f : {golden::Family::wna16, golden::Family::marlin, golden::Family::layouts, golden::Family::layer}) {
      Job j;
      j.kind = JobKind::golden;
      j.kernel = "golden";
      j.shape = "golden";
      j.family = f;
      add(j);
    }
  }
  auto seeded = [&](const testbed::MatrixEntry& e, auto&& emit) {
    for (int s = 0; s < options.seeds; ++s) {
      MoeProblem p = e.problem;
      p.seed += std::uint64_t(s);
      emit(p);
    }
  };
  // Each GEMM case on every kernel in turn: neighbouring jobs share the case and its reference,
  // which the runner builds once (job_runner.cpp).
  for (const testbed::MatrixEntry& e : entries) {
    if (e.layer) continue;
    seeded(e, [&](const MoeProblem& p) {
      for (const std::string& kernel : options.kernels) {
        Job j;
        j.kind = options.every_device ? JobKind::cross_device : JobKind::gemm;
        j.kernel = kernel;
        j.shape = e.shape;
        j.problem = p;
        add(j);
      }
    });
  }
  // Cross-device agreement: the first few GEMM cases without act-order on every kernel, on every
  // device of the run (with every_device, every case already is).
  std::size_t cross = options.every_device ? 4 : 0;
  for (const testbed::MatrixEntry& e : entries) {
    if (e.layer || e.problem.scheme.act_order || cross == 4) continue;
    ++cross;
    for (const std::string& kernel : options.kernels) {
      Job j;
      j.kind = JobKind::cross_device;
      j.kernel = kernel;
      j.shape = "cross-device";
      j.problem = e.problem;
      add(j);
    }
  }
  for (const testbed::MatrixEntry& e : entries) {
    if (!e.layer) continue;
    seeded(e, [&](const MoeProblem& p) {
      Job j;
      j.kind = JobKind::layer;
      j.kernel = e.marlin ? "moe_forward[marlin]" : "moe_forward[wna16]";
      j.shape = e.shape;
      j.problem = p;
      j.format = e.marlin ? kernels::MoeWeightFormat::marlin : kernels::MoeWeightFormat::wna16;
      add(j);
    });
  }
  number_jobs(jobs);
  return jobs;
}

}  // namespace moeval::cli
