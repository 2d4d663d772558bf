#include "k_group_attribution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "failure_pattern.h"
#include "moeval/reference/routed_rows.h"

namespace moeval::cli {
namespace {

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * x);
  return buf;
}

std::string factor_text(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "×%.4g", f);
  return buf;
}

}  // namespace

KGroupAttribution k_group_attribution(const GemmCase& c, const std::vector<std::uint16_t>& output,
                                      const reference::ReferenceOutput& ref, Tier tier, std::size_t max_suspects) {
  KGroupAttribution result;
  const QuantizedWeights& w = c.w;
  const std::int64_t K = w.k, N = w.n, G = w.groups();
  result.json = {{"groups", G}, {"suspects", nlohmann::json::array()}};
  if (G <= 1) {
    result.summary = "channelwise scales: one K-group, nothing to attribute";
    return result;
  }
  if (output.size() != ref.y.size() || ref.cols != N) {
    result.summary = "the output has " + std::to_string(output.size()) + " elements, the reference " +
                     std::to_string(ref.y.size()) + ": nothing to attribute";
    return result;
  }
  const auto routed = reference::RoutedRows::from_topk(c.routing, c.problem, c.a_row_divisor);
  // Mismatches per (local expert, column).
  std::map<std::pair<std::int32_t, std::int64_t>, std::int64_t> clusters;
  for (const auto& row : routed.rows()) {
    for (std::int64_t n = 0; n < N; ++n) {
      if (element_mismatch(output, ref, tier, ref.index(row.out_row, n))) ++clusters[{row.expert, n}];
    }
  }
  if (clusters.empty()) {
    result.summary = "no mismatch in a routed row, nothing to attribute";
    return result;
  }
  std::vector<std::pair<std::pair<std::int32_t, std::int64_t>, std::int64_t>> ordered(clusters.begin(), clusters.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  if (ordered.size() > max_suspects) ordered.resize(max_suspects);

  std::vector<double> contribution(static_cast<std::size_t>(G));
  const bool has_g_idx = w.g_idx.size() == std::size_t(w.experts * K);
  const std::int64_t group_rows = std::max<std::int64_t>(1, K / G);
  for (const auto& [key, count] : ordered) {
    const auto [e, n] = key;
    // Σ_t Δ_t², and per group Σ_t c_g,t² and Σ_t Δ_t·c_g,t over the rows of expert e.
    double dd = 0.0;
    std::int64_t rows = 0;
    std::vector<double> cc(std::size_t(G), 0.0), dc(std::size_t(G), 0.0);
    for (const auto& row : routed.rows()) {
      if (row.expert != e) continue;
      ++rows;
      const std::size_t i = ref.index(row.out_row, n);
      const double delta = to_double(output[i], ref.dtype) - ref.y[i];
      if (!std::isfinite(delta)) continue;  // a NaN or Inf says nothing about a scale
      std::fill(contribution.begin(), contribution.end(), 0.0);
      const double weight = c.mul_topk_weights ? double(row.weight) : 1.0;
      for (std::int64_t k = 0; k < K; ++k) {
        // g_idx when the case carries it (act-order's scattered groups), else contiguous groups.
        const std::int64_t g = has_g_idx ? w.g_idx[std::size_t(e * K + k)] : k / group_rows;
        if (g < 0 || g >= G) continue;  // an index out of range says nothing about a scale
        contribution[std::size_t(g)] += to_double(c.a[std::size_t(row.a_row * K + k)], c.problem.scheme.act) *
                                        to_double(w.dequant[w.code_index(e, k, n)], c.problem.scheme.act);
      }
      dd += delta * delta;
      for (std::int64_t g = 0; g < G; ++g) {
        const double cg = weight * contribution[std::size_t(g)];
        cc[std::size_t(g)] += cg * cg;
        dc[std::size_t(g)] += delta * cg;
      }
    }
    KGroupSuspect s;
    s.rows = rows;
    s.expert = e;
    s.column = n;
    s.mismatches = count;
    for (std::int64_t g = 0; g < G; ++g) {
      if (cc[std::size_t(g)] <= 0.0 || dd <= 0.0) continue;
      const double explained = dc[std::size_t(g)] * dc[std::size_t(g)] / (cc[std::size_t(g)] * dd);
      if (explained > s.explained) {
        s.explained = explained;
        s.group = g;
        s.factor = 1.0 + dc[std::size_t(g)] / cc[std::size_t(g)];
      }
    }
    result.suspects.push_back(s);
    result.json["suspects"].push_back({{"expert", s.expert}, {"column", s.column}, {"mismatches", s.mismatches}, {"rows", s.rows},
                                       {"group", s.group}, {"explained", s.explained}, {"factor", s.factor}});
    std::string line = "expert " + std::to_string(e) + ", column " + std::to_string(n) + ": ";
    if (rows < kMinRows) {
      // Every group fits a single number: one row cannot tell them apart.
      line += "only " + std::to_string(rows) + " row, not attributable";
    } else if (s.group >= 0 && s.explained >= kExplainedEnough) {
      line += "K-group " + std::to_string(s.group) + " explains " + percent(s.explained) + " (its scale looks " +
              factor_text(s.factor) + ")";
    } else {
      line += "no single K-group explains it (best " + (s.group >= 0 ? std::to_string(s.group) : std::string("none")) +
              ", " + percent(s.explained) + ")";
    }
    result.summary += (result.summary.empty() ? "" : "; ") + line;
  }
  if (clusters.size() > ordered.size()) {
    result.summary += "; " + std::to_string(clusters.size() - ordered.size()) + " more (expert, column) pairs not examined";
  }
  return result;
}

}  // namespace moeval::cli
