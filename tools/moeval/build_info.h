// What this binary is: version, commit and the CUDA architectures it was compiled for.
#pragma once

#include <string>

namespace moeval::cli {

// "moeval 0.1.0 (commit 1234abcd5678, CUDA runtime 12.4, architectures 90)"
std::string version_text();
// "0.1.0"
std::string version_number();
// The full commit hash the binary was built from ("" when unknown).
std::string git_commit();
// CMAKE_CUDA_ARCHITECTURES as configured, e.g. "90" or "80;90".
std::string cuda_architectures();

}  // namespace moeval::cli
