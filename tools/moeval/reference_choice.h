// Which reference judges a GEMM job. The CPU reference (fp64 Eigen, reference/cpu) is the truth
// wherever it is affordable; beyond that (real model shapes with every expert local and thousands
// of tokens: ~10^12 multiply-adds per case) the GPU reference judges: the same dequantized 16-bit
// weights through cuBLAS with fp32 accumulation (reference/cublas), its statistic S computed on the
// GPU too, and the bound widened by the reference's own accumulation error (gpu_reference.h).
#pragma once

#include <cstdint>
#include <string_view>

#include "moeval/fixtures/problem.h"

namespace moeval::cli {

enum class ReferenceKind { cpu_fp64, gpu_cublas };

// "cpu-fp64" / "gpu-cublas": the `reference` field of a report record and of --filter.
std::string_view to_string(ReferenceKind kind);

// Multiply-adds the CPU reference spends on a GEMM problem: the routed rows that reach a local
// expert (expected: rows × local/E) × K × N, counted twice (y and S are both sums over K).
double cpu_reference_work(const MoeProblem& problem);

// The CPU reference runs up to this many multiply-adds (about 10 s of one core in fp64). The
// largest GEMM of the standard matrix needs 1.1e9, the expert-parallel model ranks of the full
// matrix up to 7.5e9; a DeepSeek-V3 GEMM1 with 256 local experts and 4096 tokens needs 1.9e12.
inline constexpr double kCpuReferenceBudget = 0x1p34;

// cpu_fp64 within the budget, gpu_cublas beyond it. Layers are always judged on the CPU.
ReferenceKind choose_reference(const MoeProblem& problem);

}  // namespace moeval::cli
