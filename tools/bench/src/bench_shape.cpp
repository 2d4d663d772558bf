#include <sstream>
#include <stdexcept>

#include "moeval/bench/bench_shape.h"

namespace moeval::bench {

const std::vector<BenchShape>& default_shapes() {
  static const std::vector<BenchShape> shapes = {
      {"deepseek-v3-w13", 256, 4096, 7168, 8, GemmRole::w13},   // N = 2I = 4096, K = H = 7168
      {"deepseek-v3-w2", 256, 7168, 2048, 8, GemmRole::w2},     // N = H, K = I = 2048
      {"qwen3-30b-a3b-w13", 128, 1536, 2048, 8, GemmRole::w13},  // N = 2·768, K = 2048
      {"mixtral-8x7b-w13", 8, 28672, 4096, 2, GemmRole::w13},    // N = 2·14336, K = 4096
  };
  return shapes;
}

std::vector<BenchShape> select_shapes(const std::string& list) {
  if (list.empty() || list == "all") return default_shapes();
  std::vector<BenchShape> chosen;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    bool found = false;
    for (const BenchShape& s : default_shapes()) {
      if (s.name == name) {
        chosen.push_back(s);
        found = true;
      }
    }
    if (!found) {
      std::string known;
      for (const BenchShape& s : default_shapes()) known += (known.empty() ? "" : ", ") + s.name;
      throw std::invalid_argument("--shapes: unknown shape '" + name + "'; known: " + known + " (or all)");
    }
  }
  return chosen;
}

}  // namespace moeval::bench
