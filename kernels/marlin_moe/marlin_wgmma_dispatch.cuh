// Internal: the wgmma instances of the Marlin MoE GEMM by item height and form — 16- and 32-row items
// on one warpgroup, 64-row items on one or two, 128-row items on one (marlin_wgmma_kernel.cuh), and
// 64 and 128 rows on a producer and two consumers (marlin_wgmma_producer_kernel.cuh). The host asks
// for two warpgroups with 64 rows only and for the producer form with 64 or 128: marlin_moe rejects
// the rest, choose_wgmma_warpgroups never picks it.
#pragma once

#include "marlin_wgmma_kernel.cuh"
#include "marlin_wgmma_producer_kernel.cuh"

namespace moeval::kernels::detail {

template <typename T, int BITS>
void launch_marlin_wgmma(const MarlinParams& params, int rows, int warpgroups, cudaStream_t stream) {
  static_assert(WgmmaTile<BITS, 16, 1>::kTileColumns == wgmma_tile_columns(16, 1));
  static_assert(WgmmaTile<BITS, 32, 1>::kTileColumns == wgmma_tile_columns(32, 1));
  static_assert(WgmmaTile<BITS, 64, 1>::kTileColumns == wgmma_tile_columns(64, 1));
  static_assert(WgmmaTile<BITS, 64, 2>::kTileColumns == wgmma_tile_columns(64, 2));
  static_assert(WgmmaTile<BITS, 128, 1>::kTileColumns == wgmma_tile_columns(128, 1));
  static_assert(WgmmaProducerTile<BITS, 64>::kTileColumns == wgmma_tile_columns(64, kWgmmaProducerForm));
  static_assert(WgmmaProducerTile<BITS, 128>::kTileColumns == wgmma_tile_columns(128, kWgmmaProducerForm));
  if (warpgroups == kWgmmaProducerForm) {
    if (rows == 128) {
      launch_marlin_wgmma_producer<T, BITS, 128>(params, stream);
    } else {
      launch_marlin_wgmma_producer<T, BITS, 64>(params, stream);
    }
  } else if (rows == 16) {
    launch_marlin_wgmma_wgs<T, BITS, 16, 1>(params, stream);
  } else if (rows == 32) {
    launch_marlin_wgmma_wgs<T, BITS, 32, 1>(params, stream);
  } else if (rows == 128) {
    launch_marlin_wgmma_wgs<T, BITS, 128, 1>(params, stream);
  } else if (warpgroups == 2) {
    launch_marlin_wgmma_wgs<T, BITS, 64, 2>(params, stream);
  } else {
    launch_marlin_wgmma_wgs<T, BITS, 64, 1>(params, stream);
  }
}

}  // namespace moeval::kernels::detail
