// Internal, shared by both moe_align paths: from per-expert slot counts to padded offsets,
// block → expert, the padded total and the -1 tail of expert_ids. One thread block runs it.
#pragma once

#include "../common/block_scan.cuh"
#include "align_kernels.h"

namespace moeval::kernels::detail {

// counts[e] (read) and offsets[e] (written) may alias; they may be shared or global memory.
// Returns the padded total to every thread. Must be called by the whole block.
__device__ inline int scan_experts(const AlignInputs& in, const AlignOutputs& out, const int* counts, int* offsets) {
  __shared__ int scratch[32];
  const int B = in.block_size;
  int carry = 0;
  for (int base = 0; base < in.num_experts; base += blockDim.x) {
    const int e = base + static_cast<int>(threadIdx.x);
    const int count = e < in.num_experts ? counts[e] : 0;
    const int padded = (count + B - 1) / B * B;
    int chunk_total = 0;
    const int offset = carry + block_exclusive_scan(padded, scratch, &chunk_total);
    if (e < in.num_experts) {
      offsets[e] = offset;
      if (padded > 0) {
        const int value = in.expert_map != nullptr ? in.expert_map[e] : e;
        for (int b = offset / B; b < (offset + padded) / B; ++b) out.expert_ids[b] = value;
      }
    }
    carry += chunk_total;
  }
  if (threadIdx.x == 0) *out.num_tokens_post_padded = carry;
  for (std::int64_t b = carry / B + threadIdx.x; b < out.block_capacity; b += blockDim.x) out.expert_ids[b] = -1;
  return carry;
}

// One warp ranks the slots [begin, end) (ids[0 .. end - begin)) in ascending order: slot i of
// expert e goes to base[e] + cursor[e·stride] + (earlier slots of e in this walk), and the cursor
// advances past them. base may be null (0). Pointers may be shared or global memory. Whole warp.
__device__ inline void rank_slots_in_order(const AlignInputs& in, const AlignOutputs& out, const int* ids,
                                           std::int64_t begin, std::int64_t end, const int* base_offsets,
                                           int* cursor, std::int64_t cursor_stride) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned lanes_below = (1u << lane) - 1u;
  for (std::int64_t base = begin; base < end; base += 32) {
    const std::int64_t i = base + lane;
    const int e = i < end ? ids[i - begin] : -1;
    const bool counted = i < end && e >= 0 && e < in.num_experts;
    const unsigned peers = __match_any_sync(0xffffffffu, counted ? e : -1);
    int* slot_cursor = counted ? cursor + static_cast<std::int64_t>(e) * cursor_stride : nullptr;
    if (counted) {
      const int position = (base_offsets != nullptr ? base_offsets[e] : 0) + *slot_cursor + __popc(peers & lanes_below);
      out.sorted_token_ids[position] = static_cast<int>(i);
    }
    __syncwarp();
    if (counted && (peers & lanes_below) == 0) *slot_cursor += __popc(peers);
    __syncwarp();
  }
}

}  // namespace moeval::kernels::detail
