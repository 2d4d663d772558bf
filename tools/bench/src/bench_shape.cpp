#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

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

std::vector<BenchShape> select_shapes(const std::vector<std::string>& names) {
  if (names.size() == 1 && names[0] == "all") return default_shapes();
  std::string list;  // the option's text, for the messages
  for (std::size_t i = 0; i < names.size(); ++i) list += (i > 0 ? "," : "") + names[i];
  std::vector<BenchShape> chosen;
  for (const std::string& name : names) {
    if (name == "all") {
      throw std::invalid_argument("--shapes: '" + list + "': all stands alone (it selects every shape); list shapes, or give all");
    }
    if (name.empty()) throw std::invalid_argument("--shapes: '" + list + "' has an empty element; give shape names separated by commas");
    const auto known = std::find_if(default_shapes().begin(), default_shapes().end(),
                                    [&](const BenchShape& s) { return s.name == name; });
    if (known == default_shapes().end()) {
      std::string all;
      for (const BenchShape& s : default_shapes()) all += (all.empty() ? "" : ", ") + s.name;
      throw std::invalid_argument("--shapes: unknown shape '" + name + "'; known: " + all + " (or all)");
    }
    // Twice would time the shape twice and write two cells of one name into the JSON.
    if (std::any_of(chosen.begin(), chosen.end(), [&](const BenchShape& s) { return s.name == name; })) {
      throw std::invalid_argument("--shapes: '" + list + "' names " + name + " twice; list each shape once");
    }
    chosen.push_back(*known);
  }
  return chosen;
}

}  // namespace moeval::bench
