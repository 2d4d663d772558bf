// The routed rows of one MoE GEMM, from either form a kernel receives.
//
// Flat form: topk_ids / topk_weights [M·topk] (Routing). Aligned form: moe_align_block_size's
// sorted_token_ids / expert_ids / num_tokens_post_padded with its block size. Both describe the
// same set of (output row t, A row t / a_row_divisor, local expert, routing weight), so both views
// are normalised to one canonical list (sorted by expert, then output row) and the reference gives
// bit-identical results for either.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "moeval/fixtures/problem.h"
#include "moeval/fixtures/routing.h"

namespace moeval::reference {

struct RoutedRow {
  std::int64_t out_row = 0;  // flat routed index t = m·topk + j
  std::int64_t a_row = 0;    // t / a_row_divisor
  std::int32_t expert = 0;   // local expert (index into the weights)
  float weight = 0.0f;       // topk_weights[t]
};

// moe_align_block_size output as the kernels consume it (specs §2).
struct AlignedRouting {
  std::span<const std::int32_t> sorted_token_ids;  // flat indices; value == routed_rows is padding
  std::span<const std::int32_t> expert_ids;        // per block: LOCAL expert id, or -1 (skipped)
  std::int64_t num_tokens_post_padded = 0;         // blocks past this are ignored
  std::int64_t block_size = 0;
  std::int64_t routed_rows = 0;                    // T = M·topk, also the padding sentinel
};

class RoutedRows {
 public:
  // Flat form. Global ids map to local ones through problem.expert_map; rows of non-local experts
  // are left out (their outputs are zero). Throws std::invalid_argument on inconsistent sizes or
  // ids outside [0, E).
  static RoutedRows from_topk(const Routing& routing, const MoeProblem& problem, std::int64_t a_row_divisor);
  // Aligned form; topk_weights is the flat [T] array. Throws std::invalid_argument on padding
  // counts that do not fit, ids past the sentinel, or a flat index listed twice.
  static RoutedRows from_aligned(const AlignedRouting& aligned, std::span<const float> topk_weights,
                                 std::int64_t a_row_divisor);

  std::int64_t output_rows() const { return output_rows_; }
  // Rows with a local expert, sorted by (expert, out_row).
  std::span<const RoutedRow> rows() const { return rows_; }

 private:
  RoutedRows(std::int64_t output_rows, std::vector<RoutedRow> rows);

  std::int64_t output_rows_ = 0;
  std::vector<RoutedRow> rows_;
};

}  // namespace moeval::reference
