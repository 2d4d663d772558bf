#include <cstdio>

#include "moeval/bench/bench_report.h"

namespace moeval::bench {
namespace {

// The method's words on the L2 flush.
std::string flush_words(L2Flush flush) {
  return flush == L2Flush::clean ? "L2 flushed clean (a kernel reads 256 MiB through it)"
                                 : "L2 flushed dirty (cudaMemset of 256 MiB: the timed work also writes its dirty lines back)";
}

std::string us(double seconds) {
  if (seconds < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", seconds * 1e6);
  return buf;
}

}  // namespace

std::string format_table(const BenchRun& run) {
  std::string out;
  char line[1024];
  std::snprintf(line, sizeof line,
                "device: %s\nceilings (measured now): copy %.2f TB/s (cudaMemcpy D2D, read+write), dense bf16 %.0f TFLOP/s "
                "(cublasGemmEx 8192^3)\n%s before every timed run; medians of timed runs; an empty kernel timed so: "
                "%.1f us.\n"
                "Two rows per cell, one per kernel on the same weights: wna16 = wna16_moe, marlin = marlin_moe; "
                "ours = that GEMM only; +align = moe_align + GEMM; cuBLAS = reference path (host-synchronizing: "
                "routing read back, dequantize touched experts, cublasGemmEx per expert); normdiff = that kernel "
                "vs cuBLAS.\n",
                run.device.c_str(), run.ceilings.copy_bytes_per_s / 1e12, run.ceilings.dense_flops_per_s / 1e12,
                flush_words(run.l2_flush).c_str(), run.ceilings.empty_kernel_s * 1e6);
  out += line;
  if (run.ceilings.marlin_k_loop_skipped.empty()) {
    std::snprintf(line, sizeof line,
                  "marlin wgmma K loop alone (bf16 uint4b8, dequantize + MMA, nothing loaded): %.0f TFLOP/s with 64-row "
                  "items, %.0f with 128-row items, %.0f with 16-row and %.0f with 32-row items\n",
                  run.ceilings.marlin_k_loop_64 / 1e12, run.ceilings.marlin_k_loop_128 / 1e12,
                  run.ceilings.marlin_k_loop_16 / 1e12, run.ceilings.marlin_k_loop_32 / 1e12);
  } else {
    std::snprintf(line, sizeof line, "marlin wgmma K loop alone: not measured (%s)\n",
                  run.ceilings.marlin_k_loop_skipped.c_str());
  }
  out += line;
  std::snprintf(line, sizeof line, "%-18s %-6s %5s %6s %4s %3s %9s %9s %9s %9s %9s %10s %8s %8s %9s\n", "shape", "kernel",
                "M", "T", "Etch", "B", "MB", "floor_us", "roof_us", "ours_us", "+align_us", "cublas_us", "roof/ours",
                "cub/ours", "normdiff");
  out += line;
  for (const CellResult& c : run.cells) {
    struct Row {
      const char* kernel;
      int block_size;
      double gemm_s, with_align_s, normwise;
    };
    for (const Row& k : {Row{"wna16", c.block_size, c.ours_s, c.ours_with_align_s, c.normwise_vs_cublas},
                         Row{"marlin", c.marlin_block_size, c.marlin_s, c.marlin_with_align_s, c.marlin_normwise_vs_cublas}}) {
      char ratio_cublas[32] = "-";
      if (c.cublas_s >= 0) std::snprintf(ratio_cublas, sizeof ratio_cublas, "%.2f", c.cublas_s / k.gemm_s);
      char normdiff[32] = "-";
      if (k.normwise >= 0) std::snprintf(normdiff, sizeof normdiff, "%.1e", k.normwise);
      std::snprintf(line, sizeof line, "%-18s %-6s %5lld %6lld %4d %3d %9.1f %9s %9s %9s %9s %10s %8.2f %8s %9s\n",
                    c.shape.c_str(), k.kernel, static_cast<long long>(c.tokens), static_cast<long long>(c.slots),
                    c.experts_touched, k.block_size, c.bytes / 1e6, us(c.floor_s).c_str(), us(c.roofline_s).c_str(),
                    us(k.gemm_s).c_str(), us(k.with_align_s).c_str(), us(c.cublas_s).c_str(), c.roofline_s / k.gemm_s,
                    ratio_cublas, normdiff);
      out += line;
    }
  }
  return out;
}

nlohmann::json to_json(const BenchRun& run) {
  nlohmann::json j;
  j["device"] = run.device;
  j["command"] = run.command;
  j["ceilings"] = {{"copy_bytes_per_s", run.ceilings.copy_bytes_per_s},
                   {"dense_bf16_flops_per_s", run.ceilings.dense_flops_per_s},
                   {"empty_kernel_s", run.ceilings.empty_kernel_s}};
  if (run.ceilings.marlin_k_loop_skipped.empty()) {
    j["ceilings"]["marlin_wgmma_k_loop_flops_per_s"] = {{"rows_16", run.ceilings.marlin_k_loop_16},
                                                         {"rows_32", run.ceilings.marlin_k_loop_32},
                                                         {"rows_64", run.ceilings.marlin_k_loop_64},
                                                         {"rows_128", run.ceilings.marlin_k_loop_128}};
  } else {
    j["ceilings"]["marlin_wgmma_k_loop_flops_per_s"] = nullptr;
    j["ceilings"]["marlin_wgmma_k_loop_skipped"] = run.ceilings.marlin_k_loop_skipped;
  }
  j["l2_flush"] = to_string(run.l2_flush);
  // The cells' options, forced choices included (0 / automatic: the kernels' own), so that an A/B's
  // JSON says which side it is without its command line.
  const CellOptions& o = run.options;
  j["options"] = {{"repeats", o.repeats},
                  {"warmup", o.warmup},
                  {"with_cublas", o.with_cublas},
                  {"seed", o.seed},
                  {"block_size", o.block_size},
                  {"marlin_mma_path", to_string(o.marlin_mma_path)},
                  {"marlin_wgmma_warpgroups", o.marlin_wgmma_warpgroups},
                  {"marlin_warp_columns", o.marlin_warp_columns},
                  {"marlin_warps_k", o.marlin_warps_k},
                  {"marlin_split_last_round", o.marlin_split_last_round}};
  j["method"] = "median of CUDA-event-timed runs after warm-up; " + flush_words(run.l2_flush) + " before each timed run; "
                "int4 g128 bf16 random weights generated on the GPU, the same logical weights for every kernel "
                "(ours_* / roofline_over_ours: wna16_moe; marlin_*: marlin_moe); uniform routing (topk distinct experts per token)";
  nlohmann::json cells = nlohmann::json::array();
  for (const CellResult& c : run.cells) {
    cells.push_back({{"shape", c.shape},
                     {"tokens", c.tokens},
                     {"slots", c.slots},
                     {"experts_touched", c.experts_touched},
                     {"block_size", c.block_size},
                     {"marlin_block_size", c.marlin_block_size},
                     {"bytes", c.bytes},
                     {"flops", c.flops},
                     {"hbm_floor_s", c.floor_s},
                     {"compute_floor_s", c.compute_s},
                     {"roofline_s", c.roofline_s},
                     {"ours_gemm_s", c.ours_s},
                     {"ours_align_plus_gemm_s", c.ours_with_align_s},
                     {"cublas_path_s", c.cublas_s < 0 ? nlohmann::json(nullptr) : nlohmann::json(c.cublas_s)},
                     {"roofline_over_ours", c.roofline_s / c.ours_s},
                     {"cublas_over_ours", c.cublas_s < 0 ? nlohmann::json(nullptr) : nlohmann::json(c.cublas_s / c.ours_s)},
                     {"normwise_diff_vs_cublas",
                      c.normwise_vs_cublas < 0 ? nlohmann::json(nullptr) : nlohmann::json(c.normwise_vs_cublas)},
                     {"marlin_kernel", c.marlin_kernel},
                     {"marlin_warp_columns", c.marlin_warp_columns},
                     {"marlin_warps_k", c.marlin_warps_k},
                     {"marlin_gemm_s", c.marlin_s},
                     {"marlin_align_plus_gemm_s", c.marlin_with_align_s},
                     {"roofline_over_marlin", c.roofline_s / c.marlin_s},
                     {"cublas_over_marlin", c.cublas_s < 0 ? nlohmann::json(nullptr) : nlohmann::json(c.cublas_s / c.marlin_s)},
                     {"marlin_normwise_diff_vs_cublas", c.marlin_normwise_vs_cublas < 0
                                                            ? nlohmann::json(nullptr)
                                                            : nlohmann::json(c.marlin_normwise_vs_cublas)}});
  }
  j["cells"] = cells;
  return j;
}

}  // namespace moeval::bench
