// Internal: the Marlin MoE GEMM instances by item height and quantization mode (8-row items on the
// per-warp slice kernel where marlin_moe planned slices, else on the column kernel; taller items on
// the thread-block kernel).
#pragma once

#include <stdexcept>
#include <string>

#include "marlin_column_kernel.cuh"
#include "marlin_kernel.cuh"
#include "marlin_slice_kernel.cuh"

namespace moeval::kernels::detail {

template <typename T, int BITS, QuantMode MODE>
void launch_marlin_mode(const MarlinParams& params, int token_tiles, cudaStream_t stream) {
  switch (token_tiles) {
    case 1:
      if (params.slice_grid > 0) {
        if constexpr (MODE != QuantMode::k_shard) {
          if (params.warp_columns == 2) return launch_marlin_slices<T, BITS, MODE, 2>(params, stream);
        }
        return launch_marlin_slices<T, BITS, MODE, 1>(params, stream);
      }
      if constexpr (MODE != QuantMode::k_shard) {
        if (params.warp_columns == 2) return launch_marlin_columns<T, BITS, MODE, 2>(params, stream);
      }
      return launch_marlin_columns<T, BITS, MODE, 1>(params, stream);
    case 2: return launch_marlin_tiles<T, BITS, 2, MODE>(params, stream);
    case 4: return launch_marlin_tiles<T, BITS, 4, MODE>(params, stream);
    case 8:  // 64-row items: not on the K-shard path (marlin_token_tiles)
      if constexpr (MODE != QuantMode::k_shard) return launch_marlin_tiles<T, BITS, 8, MODE>(params, stream);
      break;
    default: break;
  }
  throw std::logic_error("marlin_moe: no kernel for token_tiles = " + std::to_string(token_tiles));
}

template <typename T, int BITS>
void launch_marlin(const MarlinParams& params, int token_tiles, bool k_shard, cudaStream_t stream) {
  if (k_shard) {
    launch_marlin_mode<T, BITS, QuantMode::k_shard>(params, token_tiles, stream);
  } else if (params.zeros != nullptr) {
    launch_marlin_mode<T, BITS, QuantMode::zero_point>(params, token_tiles, stream);
  } else {
    launch_marlin_mode<T, BITS, QuantMode::symmetric>(params, token_tiles, stream);
  }
}

}  // namespace moeval::kernels::detail
