#include "moeval/reference/align_reference.h"

#include <limits>
#include <stdexcept>
#include <string>

#include "moeval/fixtures/cases.h"

namespace moeval::reference {

AlignReference reference_moe_align(const Routing& routing, const MoeProblem& problem, std::int64_t block_size) {
  if (block_size < 1) {
    throw std::invalid_argument("reference_moe_align: block_size = " + std::to_string(block_size) + " must be >= 1");
  }
  const std::int64_t slots = routing.tokens * routing.topk;
  if (std::int64_t(routing.topk_ids.size()) != slots || routing.topk != problem.topk) {
    throw std::invalid_argument("reference_moe_align: routing holds " + std::to_string(routing.topk_ids.size()) +
                                " ids for M = " + std::to_string(routing.tokens) + ", topk = " + std::to_string(routing.topk) +
                                " (problem topk " + std::to_string(problem.topk) + "); allowed: M·topk ids");
  }
  // Bucket the slots by expert once (ascending slot order within an expert).
  std::vector<std::vector<std::int32_t>> by_expert(std::size_t(problem.experts));
  for (std::int64_t i = 0; i < slots; ++i) {
    const std::int32_t e = routing.topk_ids[std::size_t(i)];
    if (e >= 0 && e < problem.experts) by_expert[std::size_t(e)].push_back(std::int32_t(i));
  }
  // The padded length, before anything is allocated: sorted_token_ids are int32 indices, and a huge
  // block_size would otherwise ask for experts × block_size ids (64 GB at 2^31 with 8 experts).
  constexpr std::int64_t kMaxIds = std::numeric_limits<std::int32_t>::max();
  std::int64_t padded = 0;
  for (const std::vector<std::int32_t>& mine : by_expert) {
    if (mine.empty()) continue;
    const std::int64_t blocks = (std::int64_t(mine.size()) - 1) / block_size + 1;
    // blocks · block_size > kMaxIds − padded, without forming the product (it may not fit in 64 bits)
    if (blocks > (kMaxIds - padded) / block_size) {
      throw std::invalid_argument("reference_moe_align: block_size = " + std::to_string(block_size) + " pads the " +
                                  std::to_string(slots) + " routed slots past 2^31 - 1 sorted ids (int32); allowed: a "
                                  "block_size whose padded total fits in int32");
    }
    padded += blocks * block_size;
  }
  AlignReference out;
  out.block_size = block_size;
  out.sorted_token_ids.reserve(std::size_t(padded));
  for (std::int32_t e = 0; e < std::int32_t(problem.experts); ++e) {
    std::vector<std::int32_t>& mine = by_expert[std::size_t(e)];
    if (mine.empty()) continue;
    const std::int64_t blocks = (std::int64_t(mine.size()) + block_size - 1) / block_size;
    mine.resize(std::size_t(blocks * block_size), std::int32_t(slots));
    out.sorted_token_ids.insert(out.sorted_token_ids.end(), mine.begin(), mine.end());
    out.expert_ids.insert(out.expert_ids.end(), std::size_t(blocks), local_expert(problem, e));
  }
  out.num_tokens_post_padded = std::int64_t(out.sorted_token_ids.size());
  return out;
}

}  // namespace moeval::reference
