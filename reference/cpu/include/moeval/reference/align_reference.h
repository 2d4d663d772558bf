// CPU reference of moe_align_block_size (kernels/moe_align.h gives the contract): what a kernel's
// sorted_token_ids / expert_ids / num_tokens_post_padded must hold for a routing, so an external
// align kernel (or the inputs a foreign GEMM is handed) can be compared element by element.
//
// T = M·topk slots. Experts in ascending order; the slots of expert e (topk_ids[i] = e) in
// ascending i, padded with the sentinel T to a multiple of the block size B; expert_ids[b] is the
// owner of block b, mapped through the problem's expert_map (local id, or −1 for an expert on
// another rank). Ids outside [0, E) are not counted. Experts without slots contribute no block.
#pragma once

#include <cstdint>
#include <vector>

#include "moeval/fixtures/problem.h"
#include "moeval/fixtures/routing.h"

namespace moeval::reference {

struct AlignReference {
  std::int64_t block_size = 0;
  std::vector<std::int32_t> sorted_token_ids;  // [num_tokens_post_padded]
  std::vector<std::int32_t> expert_ids;        // [num_tokens_post_padded / block_size]
  std::int64_t num_tokens_post_padded = 0;
};

// Throws std::invalid_argument when block_size < 1 or the routing's sizes disagree with the problem.
AlignReference reference_moe_align(const Routing& routing, const MoeProblem& problem, std::int64_t block_size);

}  // namespace moeval::reference
