// `moeval bench`: our WNA16 MoE GEMM vs the cuBLAS reference path vs the roofline; --compare A B
// puts two such runs side by side.
#include <cuda_runtime.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_compare.h"
#include "commands.h"
#include "device_selection.h"
#include "exit_codes.h"
#include "json_text.h"
#include "report_file.h"
#include "text_file.h"
#include "validators.h"
#include "moeval/bench/bench_cell.h"
#include "moeval/bench/bench_report.h"
#include "moeval/bench/bench_shape.h"
#include "moeval/bench/ceilings.h"
#include "moeval/kernels/device_info.h"
#include "moeval/kernels/marlin_moe.h"

namespace moeval::cli {
namespace {

struct BenchOptions {
  std::string json_path;
  std::string shapes = "all";
  std::vector<std::int64_t> tokens = {1, 4, 16, 64, 256, 4096};
  int repeats = 20;
  int device = 0;
  bool skip_cublas = false;
  int marlin_wgmma_warpgroups = 0;
  int marlin_warp_columns = 0;
  int marlin_warps_k = 0;
  int marlin_split_last_round = 1;
  int block_size = 0;
  std::string marlin_mma_path = "automatic";
  std::string l2_flush = "clean";
  std::vector<std::string> compare;  // two bench JSON files: compare them, time nothing
};

nlohmann::json read_bench_json(const std::string& path) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const std::exception& e) {
    throw UsageError("--compare: cannot read '" + path + "': " + e.what());
  }
  nlohmann::json j = parse_json_text(text, "--compare: '" + path + "'");
  if (j.is_discarded()) throw UsageError("--compare: '" + path + "' is not valid JSON");
  return j;
}

int run_bench(const BenchOptions& o, const std::string& command) {
  if (!o.compare.empty()) {
    std::fputs(compare_bench(read_bench_json(o.compare[0]), read_bench_json(o.compare[1]), o.compare[0], o.compare[1]).c_str(),
               stdout);
    return kPass;
  }
  // Arguments and the report path first, then the device: bad input is exit 2 on any machine
  // (select_shapes refuses an unknown, empty, repeated or non-alone "all" element).
  const std::vector<bench::BenchShape> shapes = bench::select_shapes(split_list(o.shapes));
  if (const std::string m = first_repeated(o.tokens, [](std::int64_t v) { return std::to_string(v); }); !m.empty()) {
    throw UsageError("--tokens " + m + " is listed twice; list each token count once");
  }
  // Refused here, with the arguments: each cell otherwise dropped the forced warps on the cells it
  // forced two columns on, without a word (and the kernel refuses the pair as an argument error).
  if (o.marlin_warp_columns == 2 && o.marlin_warps_k > kernels::kMarlinColumnPairMaxWarps) {
    throw UsageError("--marlin-warps-k " + std::to_string(o.marlin_warps_k) +
                     " with --marlin-warp-columns 2: two tile columns per warp allow 1.." +
                     std::to_string(kernels::kMarlinColumnPairMaxWarps) + " warps per thread block");
  }
  ReportFile report(o.json_path);
  const DevicePlan plan = plan_devices({o.device});
  if (!plan.no_device.empty()) throw NothingRan("no CUDA device (" + plan.no_device + "); nothing was timed");
  if (plan.devices.empty()) throw NothingRan(plan.unusable.front());
  kernels::check_cuda(cudaSetDevice(o.device), "cudaSetDevice");
  cudaDeviceProp prop{};
  kernels::check_cuda(cudaGetDeviceProperties(&prop, o.device), "cudaGetDeviceProperties");
  bench::BenchRun run;
  run.device = prop.name;
  run.command = command;
  run.l2_flush = bench::l2_flush_from_string(o.l2_flush);
  run.ceilings = bench::measure_ceilings(o.repeats, run.l2_flush);
  bench::CellOptions cell_options;
  cell_options.repeats = o.repeats;
  cell_options.with_cublas = !o.skip_cublas;
  cell_options.marlin_wgmma_warpgroups = o.marlin_wgmma_warpgroups;
  cell_options.marlin_warp_columns = o.marlin_warp_columns;
  cell_options.marlin_warps_k = o.marlin_warps_k;
  cell_options.marlin_split_last_round = o.marlin_split_last_round != 0;
  cell_options.block_size = o.block_size;
  cell_options.l2_flush = run.l2_flush;
  cell_options.marlin_mma_path = bench::marlin_mma_path_from_string(o.marlin_mma_path);
  run.options = cell_options;
  for (const bench::BenchShape& shape : shapes) {
    bench::ShapeBench shape_bench(shape, cell_options);
    for (std::int64_t m : o.tokens) {
      run.cells.push_back(shape_bench.run(m, run.ceilings));
      const bench::CellResult& c = run.cells.back();
      std::fprintf(stderr, "  %s M=%lld: ours %.1f us, roofline %.1f us\n", c.shape.c_str(), static_cast<long long>(m),
                   c.ours_s * 1e6, c.roofline_s * 1e6);
    }
  }
  std::fputs(bench::format_table(run).c_str(), stdout);
  report.finish(bench::to_json(run));
  return kPass;
}

}  // namespace

Runner add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "Time our kernels against the cuBLAS reference path and the roofline");
  cmd->add_option("--json", options->json_path, "Write the results as JSON to this file")->check(not_empty("a file"));
  cmd->add_option("--shapes", options->shapes,
                  "Comma-separated shapes: deepseek-v3-w13, deepseek-v3-w2, qwen3-30b-a3b-w13, mixtral-8x7b-w13, or all "
                  "(alone)")
      ->check(not_empty("shape names or all"));
  add_integer_list(*cmd, "--tokens", options->tokens, 1, 1 << 24, "Token counts M, 1 to 2^24 each (default 1,4,16,64,256,4096)");
  cmd->add_option("--repeats", options->repeats, "Timed runs per measurement (median)")->check(integer_in(1, 1000));
  cmd->add_option("--device", options->device, "CUDA device index")->check(integer_in(0, 1023));
  cmd->add_flag("--skip-cublas", options->skip_cublas, "Do not run the cuBLAS reference path");
  cmd->add_option("--marlin-wgmma-warpgroups", options->marlin_wgmma_warpgroups,
                  "Warpgroups per thread block for the Marlin cells on 64-row wgmma items: 0 the kernel's choice "
                  "(default), 1 or 2 forced there, or 3 for the producer form (A/Bs of the forms)")
      ->check(integer_in(0, 3));
  cmd->add_option("--marlin-warp-columns", options->marlin_warp_columns,
                  "Marlin tile columns per warp for the Marlin cells on 8-row items (the slice or the column "
                  "kernel): 0 the kernel's choice (default), 1 or 2 forced where N allows (A/Bs)")
      ->check(integer_in(0, 2));
  cmd->add_option("--marlin-warps-k", options->marlin_warps_k,
                  "Warps per thread block of the 8-row column kernel for the Marlin cells on 8-row items: 0 the "
                  "kernel's choice (default), or 1..20 (1..12 with two tile columns per warp) forced, which runs "
                  "those cells on the column kernel (A/Bs)")
      ->check(integer_in(0, kernels::kMarlinColumnMaxWarps));
  cmd->add_option("--marlin-split-last-round", options->marlin_split_last_round,
                  "1 (default): the Marlin cells on 32-row wgmma items split their last round's items in K pieces; "
                  "0 keeps them whole (A/Bs)")
      ->check(integer_in(0, 1));
  cmd->add_option("--block-size", options->block_size,
                  "moe block size of every cell, both kernels (A/Bs); default 0: moe_forward's choice")
      ->check(integer_of({0, 8, 16, 32, 48, 64, 128}));
  cmd->add_option("--marlin-mma-path", options->marlin_mma_path,
                  "Tensor-core path of the Marlin cells: automatic (the kernel's choice, default), mma_sync forced, or "
                  "wgmma forced where a cell's items can run on it (A/Bs of the paths)")
      ->check(CLI::IsMember({"automatic", "mma_sync", "wgmma"}));
  cmd->add_option("--l2-flush", options->l2_flush,
                  "How L2 is emptied before each timed run: clean (default: a kernel reads 256 MiB through it, "
                  "leaving clean lines) or dirty (a 256 MiB cudaMemset, the method before 2026-12-03: the timed work "
                  "then also writes back the dirty lines it evicts)")
      ->check(CLI::IsMember({"clean", "dirty"}));
  auto* compare = cmd->add_option("--compare", options->compare,
                                  "Compare two bench JSON files A B cell by cell (B/A per timed path) and time nothing; no "
                                  "GPU needed; takes no other option")
                      ->expected(2)
                      ->check(not_empty("a bench JSON file"))
                      ->check(CLI::ExistingFile);
  // A comparison times nothing and writes nothing: every other option would be ignored, so it is refused.
  for (CLI::Option* other : cmd->get_options()) {
    if (other != compare && other->get_name() != "--help") compare->excludes(other);
  }
  return [options, cmd] {
    std::string command = "moeval bench";
    for (const auto& opt : cmd->get_options()) {
      if (opt->count() > 0 && opt->get_name() != "--help") {
        command += " " + opt->get_name();
        for (const auto& r : opt->results()) command += " " + r;
      }
    }
    return run_bench(*options, command);
  };
}

}  // namespace moeval::cli
