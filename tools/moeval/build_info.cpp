#include "build_info.h"

#include <cuda_runtime_api.h>

namespace moeval::cli {

std::string cuda_architectures() { return MOEVAL_CUDA_ARCHITECTURES; }

std::string version_number() { return MOEVAL_VERSION; }

std::string git_commit() { return MOEVAL_GIT_COMMIT; }

std::string version_text() {
  const std::string commit = MOEVAL_GIT_COMMIT;
  return "moeval " MOEVAL_VERSION " (commit " + (commit.empty() ? std::string("unknown") : commit.substr(0, 12)) +
         ", CUDA runtime " + std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10) +
         ", architectures " + cuda_architectures() + ")";
}

}  // namespace moeval::cli
