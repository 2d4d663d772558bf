#include "moeval/golden/loader.h"

#include <cstdlib>

#include "moeval/golden/golden_file.h"

namespace moeval::golden {

std::filesystem::path default_golden_dir() {
  if (const char* dir = std::getenv("MOEVAL_GOLDEN_DIR"); dir && *dir) return dir;
  return MOEVAL_GOLDEN_DIR;
}

std::filesystem::path family_path(const std::filesystem::path& dir, Family family) { return dir / file_name(family); }

std::vector<std::string> list_cases(const std::filesystem::path& file) { return GoldenReader(file).case_names(); }

GoldenGemmCase load_gemm_case(const std::filesystem::path& file, const std::string& name) {
  return decode_gemm_case(GoldenReader(file).read_case(name), file);
}

GoldenLayerCase load_layer_case(const std::filesystem::path& file, const std::string& name) {
  return decode_layer_case(GoldenReader(file).read_case(name), file);
}

}  // namespace moeval::golden
