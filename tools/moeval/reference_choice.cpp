#include "reference_choice.h"

namespace moeval::cli {

std::string_view to_string(ReferenceKind kind) { return kind == ReferenceKind::gpu_cublas ? "gpu-cublas" : "cpu-fp64"; }

double cpu_reference_work(const MoeProblem& problem) {
  const GemmShape g = problem.gemm();
  // GEMM1's A has M rows, each routed to topk experts; GEMM2's has M·topk routed rows already.
  const double routed = double(problem.tokens) * double(problem.topk);
  const double local = problem.experts > 0 ? double(problem.local_experts()) / double(problem.experts) : 1.0;
  return 2.0 * routed * local * double(g.k) * double(g.n);
}

ReferenceKind choose_reference(const MoeProblem& problem) {
  if (problem.kind == ProblemKind::layer) return ReferenceKind::cpu_fp64;
  return cpu_reference_work(problem) > kCpuReferenceBudget ? ReferenceKind::gpu_cublas : ReferenceKind::cpu_fp64;
}

}  // namespace moeval::cli
