#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>

#include "moeval/bench/bench_cell.h"
#include "moeval/bench/device_fill.h"
#include "moeval/bench/event_timer.h"
#include "moeval/kernels/device_info.h"
#include "moeval/kernels/marlin_moe.h"
#include "moeval/kernels/marlin_repack.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/moe_forward.h"
#include "moeval/kernels/wna16_moe.h"
#include "moeval/reference/cublas_path.h"

namespace moeval::bench {

std::string to_string(kernels::MarlinMmaPath path) {
  switch (path) {
    case kernels::MarlinMmaPath::mma_sync: return "mma_sync";
    case kernels::MarlinMmaPath::wgmma: return "wgmma";
    case kernels::MarlinMmaPath::automatic: break;
  }
  return "automatic";
}

kernels::MarlinMmaPath marlin_mma_path_from_string(const std::string& name) {
  for (kernels::MarlinMmaPath path :
       {kernels::MarlinMmaPath::automatic, kernels::MarlinMmaPath::mma_sync, kernels::MarlinMmaPath::wgmma}) {
    if (name == to_string(path)) return path;
  }
  throw std::invalid_argument("Marlin MMA path '" + name + "': allowed automatic, mma_sync or wgmma");
}
namespace {

constexpr int kGroup = 128;

// A device allocation that frees itself; sized in elements of T.
template <typename T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t count) { kernels::check_cuda(cudaMalloc(&ptr_, std::max<std::size_t>(count, 1) * sizeof(T)), "cudaMalloc"); }
  ~Buffer() { cudaFree(ptr_); }
  Buffer(Buffer&& o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    return *this;
  }
  T* get() const { return ptr_; }

 private:
  T* ptr_ = nullptr;
};

template <typename T>
Buffer<T> upload(const std::vector<T>& host) {
  Buffer<T> b(host.size());
  kernels::check_cuda(cudaMemcpy(b.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
  return b;
}

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// moe_align's output buffers and arguments for one block size (run with moe_align(args)).
struct Alignment {
  Alignment(const std::int32_t* topk_ids, std::int64_t slots, int experts, int block_size, cudaStream_t stream)
      : capacity(kernels::moe_align_sorted_capacity(slots, experts, block_size)),
        sorted(static_cast<std::size_t>(capacity)),
        expert_ids(static_cast<std::size_t>(kernels::moe_align_block_capacity(slots, experts, block_size))),
        total(1),
        workspace_bytes(kernels::moe_align_workspace_bytes(slots, experts)),
        workspace(workspace_bytes) {
    args.topk_ids = topk_ids;
    args.num_slots = slots;
    args.num_experts = experts;
    args.block_size = block_size;
    args.sorted_token_ids = sorted.get();
    args.expert_ids = expert_ids.get();
    args.num_tokens_post_padded = total.get();
    args.workspace = workspace_bytes ? workspace.get() : nullptr;
    args.workspace_bytes = workspace_bytes;
    args.stream = stream;
  }
  kernels::MoeBlocks blocks() const {
    return {args.sorted_token_ids, args.expert_ids, args.num_tokens_post_padded, capacity, args.block_size, args.num_slots};
  }
  std::int64_t capacity;
  Buffer<std::int32_t> sorted;
  Buffer<std::int32_t> expert_ids;
  Buffer<std::int32_t> total;
  std::size_t workspace_bytes;
  Buffer<std::uint8_t> workspace;
  kernels::MoeAlignArgs args;
};

std::vector<std::uint16_t> download(const std::uint16_t* device, std::size_t count, const char* what) {
  std::vector<std::uint16_t> host(count);
  kernels::check_cuda(cudaMemcpy(host.data(), device, count * 2, cudaMemcpyDeviceToHost), what);
  return host;
}

// ‖ours − theirs‖_F / ‖theirs‖_F over bf16 bits.
double normwise_difference(const std::vector<std::uint16_t>& ours, const std::vector<std::uint16_t>& theirs) {
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const double d = double(bf16_to_float(ours[i])) - bf16_to_float(theirs[i]);
    diff2 += d * d;
    ref2 += double(bf16_to_float(theirs[i])) * bf16_to_float(theirs[i]);
  }
  return ref2 > 0 ? std::sqrt(diff2 / ref2) : (diff2 > 0 ? INFINITY : 0.0);
}

}  // namespace

struct ShapeBench::State {
  BenchShape shape;
  CellOptions options;
  cudaStream_t stream = nullptr;
  std::int64_t groups = 0;
  Buffer<std::uint8_t> qweight;   // [E, N, K/2]
  Buffer<std::uint16_t> scales;   // [E, N, G]
  Buffer<std::uint8_t> codes;     // [E, K, N] one code per byte for the cuBLAS path
  Buffer<std::uint16_t> scales_t; // [E, G, N]
  Buffer<std::uint32_t> marlin_qweight;  // [E, K/16, 2N] Marlin tiles of the same codes
  Buffer<std::uint16_t> marlin_scales;   // [E, G, N] Marlin's column permutation of scales_t
  std::unique_ptr<reference::CublasGemmPath> cublas;
};

ShapeBench::ShapeBench(const BenchShape& shape, const CellOptions& options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.shape = shape;
  s.options = options;
  kernels::check_cuda(cudaStreamCreate(&s.stream), "cudaStreamCreate");
  s.groups = shape.k / kGroup;
  const std::int64_t E = shape.experts;
  s.qweight = Buffer<std::uint8_t>(static_cast<std::size_t>(E * shape.n * shape.k / 2));
  s.scales = Buffer<std::uint16_t>(static_cast<std::size_t>(E * shape.n * s.groups));
  fill_random_bytes(s.qweight.get(), E * shape.n * shape.k / 2, options.seed, s.stream);
  // Scales ~ 1/(8·√K) keep outputs O(1) for unit activations and codes − 8 in [−8, 7].
  fill_random_bf16(s.scales.get(), E * shape.n * s.groups, static_cast<float>(1.0 / (8.0 * std::sqrt(double(shape.k)))),
                   options.seed + 1, s.stream);
  // The same logical weights for the Marlin kernel, through the load path a user takes: the WNA16
  // words transposed into a GPTQ checkpoint, then kernels::gptq_to_marlin and marlin_permute_scales.
  s.scales_t = Buffer<std::uint16_t>(static_cast<std::size_t>(E * shape.n * s.groups));
  transpose_scales(s.scales.get(), s.scales_t.get(), E, shape.n, s.groups, s.stream);
  s.marlin_qweight = Buffer<std::uint32_t>(static_cast<std::size_t>(E * shape.k / 16 * 2 * shape.n));
  s.marlin_scales = Buffer<std::uint16_t>(static_cast<std::size_t>(E * shape.n * s.groups));
  {
    Buffer<std::uint32_t> gptq(static_cast<std::size_t>(E * shape.k / 8 * shape.n));
    wna16_to_gptq_int4(s.qweight.get(), gptq.get(), E, shape.n, shape.k, s.stream);
    kernels::GptqToMarlinArgs repack;
    repack.qweight = gptq.get();
    repack.out = s.marlin_qweight.get();
    repack.num_experts = static_cast<int>(E);
    repack.size_k = shape.k;
    repack.size_n = shape.n;
    repack.num_bits = 4;
    repack.stream = s.stream;
    kernels::gptq_to_marlin(repack);  // synchronizes its stream, so gptq may be freed after it
  }
  kernels::marlin_permute_scales({s.scales_t.get(), s.marlin_scales.get(), static_cast<int>(E), s.groups, shape.n, s.stream});
  if (options.with_cublas) {
    s.codes = Buffer<std::uint8_t>(static_cast<std::size_t>(E * shape.n * shape.k));
    unpack_wna16_codes(s.qweight.get(), s.codes.get(), E, shape.n, shape.k, s.stream);
    int device = 0;
    kernels::check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    s.cublas = std::make_unique<reference::CublasGemmPath>(device);
  }
  kernels::check_cuda(cudaStreamSynchronize(s.stream), "weight generation");
}

ShapeBench::~ShapeBench() {
  if (state_ && state_->stream) cudaStreamDestroy(state_->stream);
}

CellResult ShapeBench::run(std::int64_t tokens, const Ceilings& ceilings) {
  State& s = *state_;
  const BenchShape& sh = s.shape;
  const std::int64_t slots = tokens * sh.topk;
  const bool gemm1 = sh.role == GemmRole::w13;
  const std::int64_t a_rows = gemm1 ? tokens : slots;

  // Uniform routing: each token picks topk distinct experts uniformly; random routing weights.
  std::mt19937_64 rng(s.options.seed * 7919 + static_cast<std::uint64_t>(tokens));
  std::vector<std::int32_t> ids(static_cast<std::size_t>(slots));
  std::vector<float> weights(static_cast<std::size_t>(slots));
  std::set<int> touched;
  for (std::int64_t m = 0; m < tokens; ++m) {
    std::set<int> chosen;
    while (static_cast<int>(chosen.size()) < sh.topk) chosen.insert(static_cast<int>(rng() % static_cast<std::uint64_t>(sh.experts)));
    int j = 0;
    for (int e : chosen) {
      ids[static_cast<std::size_t>(m * sh.topk + j)] = e;
      weights[static_cast<std::size_t>(m * sh.topk + j)] = 0.5f / static_cast<float>(sh.topk) + 0.01f * static_cast<float>(j);
      touched.insert(e);
      ++j;
    }
  }
  Buffer<std::int32_t> d_ids = upload(ids);
  Buffer<float> d_weights = upload(weights);
  Buffer<std::uint16_t> a(static_cast<std::size_t>(a_rows * sh.k));
  fill_random_activations(a.get(), a_rows * sh.k, s.options.seed + 100 + static_cast<std::uint64_t>(tokens), s.stream);
  Buffer<std::uint16_t> c(static_cast<std::size_t>(slots * sh.n));

  // Each kernel's moe block size (choose_block_size for its weight format, as moe_forward picks it),
  // or the one forced for both; a second alignment where Marlin's differs.
  const kernels::MoeLayerShape layer{tokens, gemm1 ? sh.k : sh.n, gemm1 ? sh.n / 2 : sh.k, sh.experts, sh.topk};
  const int block_size = s.options.block_size != 0 ? s.options.block_size : kernels::choose_block_size(layer);
  // Marlin's table follows the path its items take here (mma.sync where forced so).
  int device = 0;
  kernels::check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  const bool wgmma_items = s.options.marlin_mma_path != kernels::MarlinMmaPath::mma_sync &&
                           kernels::marlin_layer_wgmma_items(kernels::MarlinMoeWeights{}, device);
  const int marlin_block_size = s.options.block_size != 0
                                    ? s.options.block_size
                                    : kernels::choose_block_size(layer, kernels::MoeWeightFormat::marlin, wgmma_items);
  const Alignment wna16_align(d_ids.get(), slots, sh.experts, block_size, s.stream);
  std::optional<Alignment> own_marlin_align;
  if (marlin_block_size != block_size) own_marlin_align.emplace(d_ids.get(), slots, sh.experts, marlin_block_size, s.stream);
  const Alignment& marlin_align = own_marlin_align ? *own_marlin_align : wna16_align;
  const kernels::MoeAlignArgs& align = wna16_align.args;

  kernels::Wna16MoeArgs gemm;
  gemm.a = a.get();
  gemm.c = c.get();
  gemm.weights = {s.qweight.get(), s.scales.get(), nullptr, sh.experts, 4, kGroup};
  gemm.blocks = wna16_align.blocks();
  gemm.shape = {sh.n, sh.k};
  gemm.top_k = gemm1 ? sh.topk : 1;
  gemm.dtype = kernels::ActDType::bf16;
  gemm.topk_weights = d_weights.get();
  gemm.mul_topk_weights = !gemm1;
  gemm.stream = s.stream;

  kernels::MarlinMoeArgs marlin;
  marlin.a = a.get();
  marlin.c = c.get();
  marlin.weights.qweight = s.marlin_qweight.get();
  marlin.weights.scales = s.marlin_scales.get();
  marlin.weights.num_experts = sh.experts;
  marlin.weights.type = kernels::MarlinWeightType::uint4b8;
  marlin.weights.group_size = kGroup;
  marlin.weights.num_groups = static_cast<int>(s.groups);
  marlin.blocks = marlin_align.blocks();
  marlin.shape = gemm.shape;
  marlin.top_k = gemm.top_k;
  marlin.dtype = gemm.dtype;
  marlin.topk_weights = gemm.topk_weights;
  marlin.mul_topk_weights = gemm.mul_topk_weights;
  marlin.stream = s.stream;
  marlin.split_last_round = s.options.marlin_split_last_round;
  const std::size_t marlin_ws_bytes = kernels::marlin_moe_workspace_bytes(marlin);
  Buffer<std::uint8_t> marlin_ws(marlin_ws_bytes);
  marlin.workspace = marlin_ws.get();
  marlin.workspace_bytes = marlin_ws_bytes;

  CellResult r;
  r.shape = sh.name;
  r.tokens = tokens;
  r.slots = slots;
  r.experts_touched = static_cast<int>(touched.size());
  r.block_size = block_size;
  r.marlin_block_size = marlin_block_size;
  const double per_expert = static_cast<double>(sh.n) * sh.k / 2 + static_cast<double>(sh.n) * s.groups * 2;
  r.bytes = per_expert * r.experts_touched + 2.0 * a_rows * sh.k + 2.0 * slots * sh.n;
  r.flops = 2.0 * slots * sh.n * sh.k;
  r.floor_s = r.bytes / ceilings.copy_bytes_per_s;
  r.compute_s = r.flops / ceilings.dense_flops_per_s;
  r.roofline_s = std::max(r.floor_s, r.compute_s);

  // Each kernel is timed, then its output of the last timed run is kept for the comparison.
  EventTimer timer(s.stream, s.options.l2_flush);
  const std::size_t out_count = static_cast<std::size_t>(slots * sh.n);
  kernels::moe_align(align);
  r.ours_s = timer.median_seconds([&] { kernels::wna16_moe(gemm); }, s.options.warmup, s.options.repeats);
  r.ours_with_align_s = timer.median_seconds(
      [&] {
        kernels::moe_align(align);
        kernels::wna16_moe(gemm);
      },
      s.options.warmup, s.options.repeats);
  const std::vector<std::uint16_t> wna16_out = download(c.get(), out_count, "download WNA16");
  kernels::moe_align(marlin_align.args);
  if (s.options.marlin_mma_path == kernels::MarlinMmaPath::mma_sync) {
    marlin.mma_path = kernels::MarlinMmaPath::mma_sync;
  } else if (s.options.marlin_mma_path == kernels::MarlinMmaPath::wgmma) {
    kernels::MarlinMmaPath chosen = marlin.mma_path;
    marlin.mma_path = kernels::MarlinMmaPath::wgmma;
    if (!kernels::marlin_moe_uses_wgmma(marlin, device)) marlin.mma_path = chosen;
  }
  const bool forcible = marlin.blocks.block_size == 64 || (s.options.marlin_wgmma_warpgroups == 3 && marlin.blocks.block_size == 128);
  if (s.options.marlin_wgmma_warpgroups != 0 && forcible && kernels::marlin_moe_uses_wgmma(marlin, device)) {
    marlin.wgmma_warpgroups = s.options.marlin_wgmma_warpgroups;
  }
  // Forced tile columns per warp and column-kernel warps only where the cell runs 8-row items (and,
  // for two columns, N holds whole pairs).
  const bool eight_rows = marlin.blocks.block_size == 8 && !kernels::marlin_moe_uses_wgmma(marlin, device);
  if (s.options.marlin_warp_columns != 0 && eight_rows && (s.options.marlin_warp_columns == 1 || marlin.shape.n % 128 == 0)) {
    marlin.warp_columns = s.options.marlin_warp_columns;
  }
  // `moeval bench` refuses more warps than two columns allow together with two forced columns.
  if (s.options.marlin_warps_k != 0 && eight_rows) marlin.warps_k = s.options.marlin_warps_k;
  // The kernel the timed calls launched, as marlin_moe recorded it (not a prediction).
  kernels::MarlinLaunchRecord launched;
  marlin.launched = &launched;
  r.marlin_s = timer.median_seconds([&] { kernels::marlin_moe(marlin); }, s.options.warmup, s.options.repeats);
  marlin.launched = nullptr;
  r.marlin_kernel = kernels::marlin_kernel_form_name(launched.form);
  r.marlin_warp_columns = launched.warp_columns;
  r.marlin_warps_k = launched.warps_k;
  r.marlin_with_align_s = timer.median_seconds(
      [&] {
        kernels::moe_align(marlin_align.args);
        kernels::marlin_moe(marlin);
      },
      s.options.warmup, s.options.repeats);
  const std::vector<std::uint16_t> marlin_out = download(c.get(), out_count, "download Marlin");

  if (s.cublas) {
    Buffer<std::uint16_t> ref(out_count);
    reference::CublasGemmArgs args;
    args.a = a.get();
    args.a_rows = a_rows;
    args.a_row_divisor = gemm1 ? sh.topk : 1;
    args.mul_topk_weights = !gemm1;
    args.w = {s.codes.get(), s.scales_t.get(), nullptr, nullptr, sh.experts, sh.k, sh.n, s.groups, 4, 8,
              reference::Float16Kind::bf16};
    args.routing = {d_ids.get(), d_weights.get(), nullptr, tokens, sh.topk, sh.experts};
    args.out16 = ref.get();
    r.cublas_s = timer.median_seconds([&] { s.cublas->run(args, s.stream); }, 1, std::min(s.options.repeats, 5));
    const std::vector<std::uint16_t> theirs = download(ref.get(), out_count, "download cuBLAS");
    r.normwise_vs_cublas = normwise_difference(wna16_out, theirs);
    r.marlin_normwise_vs_cublas = normwise_difference(marlin_out, theirs);
  }
  kernels::check_cuda(cudaStreamSynchronize(s.stream), "bench cell");
  return r;
}

}  // namespace moeval::bench
