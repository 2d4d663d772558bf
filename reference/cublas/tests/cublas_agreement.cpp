#include "cublas_agreement.h"

#include <gtest/gtest.h>

#include "moeval/reference/cublas_reference.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/tolerance/compare.h"

namespace moeval::testing {

MoeProblem agreement_problem(ProblemKind kind, QuantScheme scheme, std::int64_t experts) {
  MoeProblem p;
  p.kind = kind;
  p.experts = experts;
  p.scheme = scheme;
  p.seed = 5;
  if (experts <= 8) {
    p.tokens = 16;
    p.topk = 4;
    p.hidden = 256;
    p.inter = 128;
  } else {
    p.tokens = 64;
    p.topk = 8;
    p.hidden = 128;
    p.inter = 128;
  }
  return p;
}

double expect_cublas_agrees_with_cpu(const GemmCase& c, int device) {
  EXPECT_EQ(reference::cublas_dequantize(c.w, device), c.w.dequant) << "GPU dequant differs from fixtures";
  const reference::CublasGemmResult gpu = reference::cublas_reference_gemm(c, device);
  const reference::ReferenceOutput cpu = reference::reference_gemm(c);
  EXPECT_EQ(gpu.rows, cpu.rows);
  EXPECT_EQ(gpu.cols, cpu.cols);
  const tolerance::Verdict v =
      tolerance::compare_bounded(reference::Matrix16{gpu.out16, gpu.rows, gpu.cols, cpu.dtype}, cpu);
  EXPECT_TRUE(v.pass()) << c.problem.name() << ": " << v.summary();
  std::printf("  %-70s max ratio %.3f\n", c.problem.name().c_str(), v.max_ratio);
  return v.max_ratio;
}

}  // namespace moeval::testing
