// moe_align for small problems: one thread block, everything staged in shared memory.
#include "../common/block_scan.cuh"
#include "align_expert_scan.cuh"
#include "align_kernels.h"
#include "moeval/kernels/device_info.h"

namespace moeval::kernels::detail {
namespace {

constexpr int kThreads = 1024;
// Shared memory for cursors [E] plus ids [T]; 48 KiB is what every launch gets without opt-in.
constexpr std::int64_t kMaxSharedInts = 48 * 1024 / 4;

__global__ void __launch_bounds__(kThreads) align_single_block_kernel(AlignInputs in, AlignOutputs out) {
  extern __shared__ int shared[];
  int* cursor = shared;                 // counts, then offsets, then running positions
  int* ids = shared + in.num_experts;   // the slots' experts, read from global once
  const int T = static_cast<int>(in.num_slots);
  for (int e = threadIdx.x; e < in.num_experts; e += blockDim.x) cursor[e] = 0;
  for (int i = threadIdx.x; i < T; i += blockDim.x) ids[i] = in.topk_ids[i];
  __syncthreads();
  for (int i = threadIdx.x; i < T; i += blockDim.x) {
    const int e = ids[i];
    if (e >= 0 && e < in.num_experts) atomicAdd(&cursor[e], 1);  // integer counts: order-free
  }
  __syncthreads();
  scan_experts(in, out, cursor, cursor);
  for (std::int64_t j = threadIdx.x; j < out.sorted_capacity; j += blockDim.x) out.sorted_token_ids[j] = T;
  __syncthreads();  // the padding fill is visible before warp 0 overwrites the ranked positions
  if (threadIdx.x < 32) rank_slots_in_order(in, out, ids, 0, T, nullptr, cursor, 1);
}

}  // namespace

bool align_fits_single_block(std::int64_t num_slots, int num_experts) {
  return num_slots <= 8192 && num_slots + num_experts <= kMaxSharedInts;
}

void launch_align_single_block(const AlignInputs& in, const AlignOutputs& out, cudaStream_t stream) {
  const std::size_t shared_bytes = static_cast<std::size_t>(in.num_slots + in.num_experts) * sizeof(int);
  align_single_block_kernel<<<1, kThreads, shared_bytes, stream>>>(in, out);
  check_cuda(cudaGetLastError(), "moe_align: single-block kernel launch");
}

}  // namespace moeval::kernels::detail
