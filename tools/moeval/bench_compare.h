// `moeval bench --compare A.json B.json`: two bench runs side by side, cell by cell (shape × M):
// each timed path's time in A and in B and their ratio B / A (> 1: B is slower), and the geometric
// mean of the ratios per path. Cells or paths only one run has are listed, not compared.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace moeval::cli {

// The timed paths a bench JSON can hold, in the order they are printed.
inline constexpr const char* kBenchTimes[] = {"ours_gemm_s", "marlin_gemm_s", "cublas_path_s", "ours_align_plus_gemm_s",
                                              "marlin_align_plus_gemm_s"};

// Throws UsageError naming `name_a` / `name_b` when one is not a bench report (no "cells" array,
// a cell without shape or tokens).
std::string compare_bench(const nlohmann::json& a, const nlohmann::json& b, const std::string& name_a,
                          const std::string& name_b);

}  // namespace moeval::cli
