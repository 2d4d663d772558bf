#include "failure_pattern.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "moeval/tolerance/bound.h"

namespace moeval::cli {
namespace {

constexpr std::int64_t kMapCells = 48;  // the coarse map is at most 48 × 48 cells
constexpr std::size_t kFirst = 8;       // indices listed in "first"

nlohmann::json index_set(const std::vector<std::int64_t>& counts) {
  nlohmann::json first = nlohmann::json::array();
  std::int64_t count = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    ++count;
    if (first.size() < kFirst) first.push_back(i);
  }
  return {{"count", count}, {"of", counts.size()}, {"first", first}};
}

std::string list(const nlohmann::json& set, const char* singular) {
  std::string s = set["count"].dump() + " of " + set["of"].dump() + " " + singular + "s";
  if (set["count"].get<std::int64_t>() <= std::int64_t(kFirst) && set["count"].get<std::int64_t>() > 0) {
    std::string items;
    for (const auto& i : set["first"]) items += (items.empty() ? "" : ", ") + i.dump();
    s += " (" + items + ")";
  }
  return s;
}

// Positions inside a period that hold mismatches, as "5 only" / "0-7" / "all 64".
std::string periodic(const std::vector<std::int64_t>& counts) {
  std::vector<std::size_t> hit;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i]) hit.push_back(i);
  }
  if (hit.size() == counts.size()) return "all " + std::to_string(counts.size());
  if (hit.size() == 1) return std::to_string(hit[0]) + " only";
  if (hit.back() - hit.front() + 1 == hit.size()) return std::to_string(hit.front()) + "-" + std::to_string(hit.back());
  return std::to_string(hit.size()) + " of " + std::to_string(counts.size()) + " positions";
}

}  // namespace

bool element_mismatch(const std::vector<std::uint16_t>& output, const reference::ReferenceOutput& ref, Tier tier,
                      std::size_t i) {
  if (i >= output.size()) return false;
  if (tier == Tier::exact) return output[i] != ref.y16[i];
  const double v = to_double(output[i], ref.dtype);
  const double y = ref.y[i];
  if (!std::isfinite(y)) return !(v == y || (std::isnan(v) && std::isnan(y)));
  return !std::isfinite(v) ||
         std::abs(v - y) > tolerance::element_bound(y, ref.s[i], std::max<std::int64_t>(1, ref.reduction_length), ref.dtype,
                                                    {}, ref.rounding);
}

FailurePattern failure_pattern(const std::vector<std::uint16_t>& output, const reference::ReferenceOutput& ref, Tier tier,
                               const std::vector<std::int32_t>& row_expert, std::int64_t experts) {
  FailurePattern p;
  const std::int64_t rows = ref.rows, cols = ref.cols;
  p.elements = rows * cols;
  std::vector<std::int64_t> row_count(std::size_t(rows), 0), col_count(std::size_t(cols), 0);
  std::vector<std::int64_t> expert_count(std::size_t(std::max<std::int64_t>(experts, 0)), 0);
  std::vector<std::int64_t> col_tile(64, 0), row_tile(16, 0), col_in8(8, 0);
  // Mismatches per 8- and per 64-column group of the output: a wrong scale permutation or scale
  // index moves whole column groups (Marlin permutes scales within 8-column groups of a 64-wide tile).
  std::vector<std::int64_t> tiles8(std::size_t((cols + 7) / 8), 0), tiles64(std::size_t((cols + 63) / 64), 0);
  const std::int64_t row_step = std::max<std::int64_t>(1, (rows + kMapCells - 1) / kMapCells);
  const std::int64_t col_step = std::max<std::int64_t>(1, (cols + kMapCells - 1) / kMapCells);
  const std::int64_t map_rows = rows == 0 ? 0 : (rows + row_step - 1) / row_step;
  const std::int64_t map_cols = cols == 0 ? 0 : (cols + col_step - 1) / col_step;
  std::vector<std::vector<double>> map(std::size_t(map_rows), std::vector<double>(std::size_t(map_cols), 0.0));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      if (!element_mismatch(output, ref, tier, ref.index(r, c))) continue;
      ++p.mismatches;
      ++row_count[std::size_t(r)];
      ++col_count[std::size_t(c)];
      ++col_tile[std::size_t(c % 64)];
      ++col_in8[std::size_t(c % 8)];
      ++tiles8[std::size_t(c / 8)];
      ++tiles64[std::size_t(c / 64)];
      ++row_tile[std::size_t(r % 16)];
      if (std::size_t(r) < row_expert.size()) {
        const std::int32_t e = row_expert[std::size_t(r)];
        if (e >= 0 && e < experts) ++expert_count[std::size_t(e)];
      }
      map[std::size_t(r / row_step)][std::size_t(c / col_step)] += 1.0;
    }
  }
  for (std::int64_t mr = 0; mr < map_rows; ++mr) {
    for (std::int64_t mc = 0; mc < map_cols; ++mc) {
      const std::int64_t h = std::min(row_step, rows - mr * row_step), w = std::min(col_step, cols - mc * col_step);
      map[std::size_t(mr)][std::size_t(mc)] /= double(h * w);
    }
  }
  p.json = {{"rows", index_set(row_count)},
            {"cols", index_set(col_count)},
            {"col_in_tile64", col_tile},
            {"col_in_tile8", col_in8},
            {"col_tiles8", index_set(tiles8)},
            {"col_tiles64", index_set(tiles64)},
            {"row_in_tile16", row_tile},
            {"map", {{"rows", rows}, {"cols", cols}, {"row_step", row_step}, {"col_step", col_step}, {"fraction", map}}}};
  if (!row_expert.empty()) {
    nlohmann::json e = index_set(expert_count);
    e["counts"] = expert_count;
    p.json["experts"] = e;
  }
  char fraction[64];
  std::snprintf(fraction, sizeof fraction, "%.3g%%", p.elements ? 100.0 * double(p.mismatches) / double(p.elements) : 0.0);
  p.summary = std::to_string(p.mismatches) + " of " + std::to_string(p.elements) + " elements (" + fraction + ")";
  if (p.mismatches > 0) {
    p.summary += " in " + list(p.json["rows"], "row") + ", " + list(p.json["cols"], "column");
    if (p.json.contains("experts")) p.summary += ", " + list(p.json["experts"], "expert");
    p.summary += "; columns in " + list(p.json["col_tiles8"], "8-column group") + ", " + list(p.json["col_tiles64"], "64-column tile");
    p.summary += "; column within a 64-wide tile: " + periodic(col_tile) + "; row within 16: " + periodic(row_tile);
  }
  return p;
}

}  // namespace moeval::cli
