// Loading committed golden cases for kernels (the testbed's entry point).
//
//   const auto path = golden::family_path(golden::default_golden_dir(), golden::Family::marlin);
//   for (const std::string& name : golden::list_cases(path)) {
//     const golden::GoldenGemmCase c = golden::load_gemm_case(path, name);
//     // feed c.gemm (or c.layouts["marlin/qweight"], ...) to a kernel, compare with c.expected
//   }
// Every failure (missing/corrupt/wrong-schema file, absent case, inconsistent data) is a GoldenError.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "moeval/golden/case_codec.h"
#include "moeval/golden/corpus.h"

namespace moeval::golden {

// $MOEVAL_GOLDEN_DIR when set, else the source tree's golden/data compiled in at configure time
// (an absolute path, so it works from the build tree as well).
std::filesystem::path default_golden_dir();
std::filesystem::path family_path(const std::filesystem::path& dir, Family family);

std::vector<std::string> list_cases(const std::filesystem::path& file);
GoldenGemmCase load_gemm_case(const std::filesystem::path& file, const std::string& name);
GoldenLayerCase load_layer_case(const std::filesystem::path& file, const std::string& name);

}  // namespace moeval::golden
