#include "moeval/reference/routed_rows.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace moeval::reference {
namespace {

[[noreturn]] void fail_routed_rows(const std::string& message) { throw std::invalid_argument("RoutedRows: " + message); }

void require_divisor(std::int64_t a_row_divisor) {
  if (a_row_divisor < 1) fail_routed_rows("a_row_divisor = " + std::to_string(a_row_divisor) + " must be at least 1");
}

void sort_canonically(std::vector<RoutedRow>& rows) {
  std::sort(rows.begin(), rows.end(), [](const RoutedRow& x, const RoutedRow& y) {
    return x.expert != y.expert ? x.expert < y.expert : x.out_row < y.out_row;
  });
}

}  // namespace

RoutedRows::RoutedRows(std::int64_t output_rows, std::vector<RoutedRow> rows)
    : output_rows_(output_rows), rows_(std::move(rows)) {
  sort_canonically(rows_);
}

RoutedRows RoutedRows::from_topk(const Routing& routing, const MoeProblem& problem, std::int64_t a_row_divisor) {
  require_divisor(a_row_divisor);
  const std::int64_t t_rows = routing.tokens * routing.topk;
  if (routing.tokens < 0 || routing.topk < 1) {
    fail_routed_rows("routing has tokens = " + std::to_string(routing.tokens) + ", topk = " + std::to_string(routing.topk) +
         "; allowed: tokens >= 0, topk >= 1");
  }
  if (std::int64_t(routing.topk_ids.size()) != t_rows || std::int64_t(routing.topk_weights.size()) != t_rows) {
    fail_routed_rows("topk_ids has " + std::to_string(routing.topk_ids.size()) + " and topk_weights " +
         std::to_string(routing.topk_weights.size()) + " entries; both need tokens·topk = " + std::to_string(t_rows));
  }
  if (!problem.expert_map.empty() && std::int64_t(problem.expert_map.size()) != problem.experts) {
    fail_routed_rows("expert_map has " + std::to_string(problem.expert_map.size()) + " entries; it needs E = " +
         std::to_string(problem.experts) + " or none");
  }
  std::vector<RoutedRow> rows;
  rows.reserve(std::size_t(t_rows));
  for (std::int64_t t = 0; t < t_rows; ++t) {
    const std::int32_t global = routing.topk_ids[std::size_t(t)];
    if (global < 0 || global >= problem.experts) {
      fail_routed_rows("topk_ids[" + std::to_string(t) + "] = " + std::to_string(global) + " is outside [0, E = " +
           std::to_string(problem.experts) + ")");
    }
    const std::int32_t local = problem.expert_map.empty() ? global : problem.expert_map[std::size_t(global)];
    if (local < 0) continue;  // not on this rank: the row stays zero
    rows.push_back({t, t / a_row_divisor, local, routing.topk_weights[std::size_t(t)]});
  }
  return RoutedRows(t_rows, std::move(rows));
}

RoutedRows RoutedRows::from_aligned(const AlignedRouting& aligned, std::span<const float> topk_weights,
                                    std::int64_t a_row_divisor) {
  require_divisor(a_row_divisor);
  if (aligned.block_size < 1) fail_routed_rows("block_size = " + std::to_string(aligned.block_size) + " must be at least 1");
  const std::int64_t padded = aligned.num_tokens_post_padded;
  const std::int64_t blocks = padded / aligned.block_size;
  if (padded < 0 || padded % aligned.block_size != 0 || padded > std::int64_t(aligned.sorted_token_ids.size()) ||
      blocks > std::int64_t(aligned.expert_ids.size())) {
    fail_routed_rows("num_tokens_post_padded = " + std::to_string(padded) + " must be a non-negative multiple of block_size = " +
         std::to_string(aligned.block_size) + " covered by sorted_token_ids (" +
         std::to_string(aligned.sorted_token_ids.size()) + " entries) and expert_ids (" +
         std::to_string(aligned.expert_ids.size()) + " blocks)");
  }
  const std::int64_t t_rows = aligned.routed_rows;
  if (t_rows < 0 || std::int64_t(topk_weights.size()) != t_rows) {
    fail_routed_rows("topk_weights has " + std::to_string(topk_weights.size()) + " entries; it needs routed_rows = " +
         std::to_string(t_rows));
  }
  std::vector<bool> seen(std::size_t(t_rows), false);
  std::vector<RoutedRow> rows;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int32_t expert = aligned.expert_ids[std::size_t(b)];
    if (expert < -1) fail_routed_rows("expert_ids[" + std::to_string(b) + "] = " + std::to_string(expert) + "; allowed: -1 or a local id");
    for (std::int64_t i = b * aligned.block_size; i < (b + 1) * aligned.block_size; ++i) {
      const std::int64_t t = aligned.sorted_token_ids[std::size_t(i)];
      if (t == t_rows) continue;  // padding sentinel
      if (t < 0 || t > t_rows) {
        fail_routed_rows("sorted_token_ids[" + std::to_string(i) + "] = " + std::to_string(t) + " is outside [0, T = " +
             std::to_string(t_rows) + "] (T is the padding value)");
      }
      if (seen[std::size_t(t)]) fail_routed_rows("flat index " + std::to_string(t) + " appears twice in sorted_token_ids");
      seen[std::size_t(t)] = true;
      if (expert >= 0) rows.push_back({t, t / a_row_divisor, expert, topk_weights[std::size_t(t)]});
    }
  }
  return RoutedRows(t_rows, std::move(rows));
}

}  // namespace moeval::reference
