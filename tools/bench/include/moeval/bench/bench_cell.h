// One benchmark cell: a shape at a token count M, our WNA16 and Marlin kernels vs the cuBLAS
// reference path vs the roofline, on the same random int4 g128 bf16 weights (each kernel in its own
// layout) and uniform routing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "moeval/bench/bench_shape.h"
#include "moeval/bench/ceilings.h"
#include "moeval/kernels/marlin_moe.h"

namespace moeval::bench {

// The Marlin tensor-core path by the names `--marlin-mma-path` takes and the JSON's options record:
// "automatic", "mma_sync", "wgmma" (else std::invalid_argument).
std::string to_string(kernels::MarlinMmaPath path);
kernels::MarlinMmaPath marlin_mma_path_from_string(const std::string& name);

struct CellOptions {
  int repeats = 20;      // timed runs per measurement (median); the cuBLAS path uses min(repeats, 5)
  int warmup = 3;
  bool with_cublas = true;
  std::uint64_t seed = 1;
  // Warpgroups per wgmma thread block for the Marlin cells that run 64-row wgmma items (0: the
  // kernel's choice; 1 or 2 forced there, 3 the producer form, which also takes 128-row items;
  // other cells unaffected): same-run A/Bs of the forms.
  int marlin_wgmma_warpgroups = 0;
  // Marlin tile columns per warp for the cells on 8-row items (the slice or the column kernel; 0: the
  // kernel's choice; 1 or 2 forced where N is a multiple of 128): same-run A/Bs.
  int marlin_warp_columns = 0;
  // Warps per thread block of the 8-row column kernel for the cells on 8-row items (0: the kernel's
  // choice; forced, such a cell runs the column kernel even where it would run the slice kernel).
  int marlin_warps_k = 0;
  // false: the Marlin cells on 32-row wgmma items keep their last round's items whole
  // (MarlinMoeArgs::split_last_round): same-run A/Bs.
  bool marlin_split_last_round = true;
  // The moe block size of every cell (both kernels) in place of choose_block_size's (0: chosen).
  int block_size = 0;
  // The Marlin cells' tensor-core path: automatic (the kernel's choice), mma_sync forced everywhere,
  // or wgmma forced where the cell's items can run on it (elsewhere the kernel's choice): A/Bs.
  kernels::MarlinMmaPath marlin_mma_path = kernels::MarlinMmaPath::automatic;
  // How the L2 is emptied before each timed run (event_timer.h).
  L2Flush l2_flush = L2Flush::clean;
};

struct CellResult {
  std::string shape;
  std::int64_t tokens = 0;          // M
  std::int64_t slots = 0;           // T = M·topk
  int experts_touched = 0;
  int block_size = 0;
  int marlin_block_size = 0;         // the Marlin kernel's (choose_block_size for Marlin weights)
  double bytes = 0;                 // touched weights + scales + activations + outputs
  double flops = 0;                 // 2·T·N·K
  double floor_s = 0;               // bytes / copy bandwidth
  double compute_s = 0;             // flops / dense bf16 rate
  double roofline_s = 0;            // max of the two
  double ours_s = 0;                // WNA16 GEMM only (moe_align excluded)
  double ours_with_align_s = 0;     // moe_align + WNA16 GEMM
  double cublas_s = -1;             // cuBLAS path (dequantize touched experts + GEMMs); -1: not run
  double normwise_vs_cublas = -1;   // ‖WNA16 − cuBLAS‖_F / ‖cuBLAS‖_F on the same weights; -1: not run
  // The Marlin kernel on the same logical weights, same block size, routing, activations and method.
  double marlin_s = 0;               // GEMM only (moe_align excluded)
  double marlin_with_align_s = 0;    // moe_align + GEMM
  double marlin_normwise_vs_cublas = -1;  // ‖Marlin − cuBLAS‖_F / ‖cuBLAS‖_F; -1: cuBLAS path not run
  // Which Marlin kernel ran: "wgmma" (one warpgroup per thread block), "wgmma-2wg" (two),
  // "wgmma-producer" (a producer warpgroup and two that multiply), "slices"
  // (8-row items, K slices across warps) or "thread-block" (the other mma.sync items).
  std::string marlin_kernel;
  int marlin_warp_columns = 0;       // 8-row items: Marlin tile columns per warp (else 0)
  int marlin_warps_k = 0;            // the column kernel's warps per thread block (else 0)
};

// Holds one shape's weights on the device (our WNA16 layout; the logical codes, Marlin's tiles and
// permuted scales, and the cuBLAS path's layout derived from it on the GPU) and times cells
// against them.
class ShapeBench {
 public:
  ShapeBench(const BenchShape& shape, const CellOptions& options);
  ~ShapeBench();
  ShapeBench(const ShapeBench&) = delete;
  ShapeBench& operator=(const ShapeBench&) = delete;

  CellResult run(std::int64_t tokens, const Ceilings& ceilings);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace moeval::bench
