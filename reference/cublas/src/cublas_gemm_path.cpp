#include <cublas_v2.h>

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_check.h"
#include "moeval/kernels/device_info.h"
#include "moeval/reference/cublas_path.h"
#include "path_kernels.h"
#include "workspace.h"

namespace moeval::reference {
namespace {

constexpr const char* kWhere = "CublasGemmPath::run";

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
  }
}

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(std::string(kWhere) + ": " + message); }

void validate_shapes(const CublasGemmArgs& args) {
  detail::validate_weights(args.w, kWhere);
  const DeviceRouting& r = args.routing;
  if (r.tokens < 0 || r.topk < 1 || r.global_experts < 1) {
    fail("routing has tokens = " + std::to_string(r.tokens) + ", topk = " + std::to_string(r.topk) + ", E = " +
         std::to_string(r.global_experts) + "; allowed: tokens >= 0, topk >= 1, E >= 1");
  }
  if (args.a_row_divisor < 1 || args.a_rows < 0) {
    fail("a_row_divisor = " + std::to_string(args.a_row_divisor) + " and a_rows = " + std::to_string(args.a_rows) +
         "; allowed: divisor >= 1, rows >= 0");
  }
  // With no routed rows (M = 0) there is nothing to write, and empty outputs may be null.
  if (r.tokens > 0 && args.out_f32 == nullptr && args.out16 == nullptr) {
    fail("out_f32 and out16 are both null; give at least one");
  }
  if (args.w.k > INT_MAX || args.w.n > INT_MAX || r.tokens * r.topk > INT_MAX) {
    fail("K = " + std::to_string(args.w.k) + ", N = " + std::to_string(args.w.n) + " or T = " +
         std::to_string(r.tokens * r.topk) + " exceeds cuBLAS's int range");
  }
}

// Flat routed rows of each local expert, ascending, from the host copy of the routing.
struct Groups {
  std::vector<std::int32_t> rows;    // concatenated per expert
  std::vector<std::int64_t> offset;  // [E_local + 1]
};

Groups group_rows(const CublasGemmArgs& args, const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& map) {
  const std::int64_t experts = args.w.experts;
  std::vector<std::vector<std::int32_t>> per(static_cast<std::size_t>(experts));
  for (std::size_t t = 0; t < ids.size(); ++t) {
    const std::int32_t global = ids[t];
    if (global < 0 || global >= args.routing.global_experts) {
      fail("topk_ids[" + std::to_string(t) + "] = " + std::to_string(global) + " is outside [0, E = " +
           std::to_string(args.routing.global_experts) + ")");
    }
    const std::int32_t local = map.empty() ? global : map[std::size_t(global)];
    if (local < -1 || local >= experts) {
      fail("expert " + std::to_string(global) + " maps to local id " + std::to_string(local) + "; allowed: -1 or [0, " +
           std::to_string(experts) + ")");
    }
    if (local < 0) continue;
    if (std::int64_t(t) / args.a_row_divisor >= args.a_rows) {
      fail("routed row " + std::to_string(t) + " reads row " + std::to_string(std::int64_t(t) / args.a_row_divisor) +
           " of a, which has " + std::to_string(args.a_rows) + " rows");
    }
    per[std::size_t(local)].push_back(std::int32_t(t));
  }
  Groups g;
  g.offset.push_back(0);
  for (const auto& rows : per) {
    g.rows.insert(g.rows.end(), rows.begin(), rows.end());
    g.offset.push_back(std::int64_t(g.rows.size()));
  }
  return g;
}

cudaDataType_t cuda_type(Float16Kind dtype) { return dtype == Float16Kind::f16 ? CUDA_R_16F : CUDA_R_16BF; }

}  // namespace

struct CublasGemmPath::State {
  int device = 0;
  cublasHandle_t handle = nullptr;
  detail::Workspace rows, gathered, product, w16, flags;
};

CublasGemmPath::CublasGemmPath(int device) : state_(std::make_unique<State>()) {
  state_->device = device;
  kernels::DeviceGuard guard(device);
  check_cublas(cublasCreate(&state_->handle), "cublasCreate");
  // 16-bit inputs with fp32 compute: forbid reduced-precision (16-bit) reductions explicitly.
  check_cublas(cublasSetMathMode(state_->handle,
                                 cublasMath_t(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
               "cublasSetMathMode");
}

CublasGemmPath::~CublasGemmPath() {
  if (!state_) return;
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(state_->device);  // workspaces and the handle belong to this device
  cublasDestroy(state_->handle);
  state_.reset();
  cudaSetDevice(previous);
}

int CublasGemmPath::device() const { return state_->device; }

void CublasGemmPath::run(const CublasGemmArgs& args, cudaStream_t stream) {
  validate_shapes(args);
  const std::int64_t t_rows = args.routing.tokens * args.routing.topk;
  if (t_rows == 0) return;  // no routed rows: nothing to read or write
  const DeviceQuantWeights& w = args.w;
  const int device = detail::common_device(
      {{args.a, "a"}, {w.codes, "codes"}, {w.scales, "scales"}, {args.routing.topk_ids, "topk_ids"},
       {args.routing.topk_weights, "topk_weights"}},
      {{w.zeros, "zeros"}, {w.g_idx, "g_idx"}, {args.routing.expert_map, "expert_map"}, {args.out_f32, "out_f32"},
       {args.out16, "out16"}},
      kWhere);
  if (device != state_->device) {
    fail("the buffers live on device " + std::to_string(device) + " but this path was created for device " +
         std::to_string(state_->device));
  }
  kernels::DeviceGuard guard(device);
  State& s = *state_;
  check_cublas(cublasSetStream(s.handle, stream), "cublasSetStream");

  // cuBLAS needs each expert's row count on the host: read the routing back once.
  std::vector<std::int32_t> ids(static_cast<std::size_t>(t_rows));
  std::vector<std::int32_t> map(args.routing.expert_map != nullptr ? std::size_t(args.routing.global_experts) : 0);
  kernels::check_cuda(cudaMemcpyAsync(ids.data(), args.routing.topk_ids, ids.size() * sizeof(std::int32_t),
                                      cudaMemcpyDeviceToHost, stream), "copy topk_ids");
  if (!map.empty()) {
    kernels::check_cuda(cudaMemcpyAsync(map.data(), args.routing.expert_map, map.size() * sizeof(std::int32_t),
                                        cudaMemcpyDeviceToHost, stream), "copy expert_map");
  }
  kernels::check_cuda(cudaStreamSynchronize(stream), "read routing");
  const Groups groups = group_rows(args, ids, map);
  const std::int64_t local_rows = std::int64_t(groups.rows.size());

  // Rows of non-local experts stay zero.
  const std::size_t out_elements = std::size_t(t_rows * w.n);
  if (args.out_f32) kernels::check_cuda(cudaMemsetAsync(args.out_f32, 0, out_elements * sizeof(float), stream), "zero out_f32");
  if (args.out16) kernels::check_cuda(cudaMemsetAsync(args.out16, 0, out_elements * sizeof(std::uint16_t), stream), "zero out16");
  int* flags = s.flags.reserve_for<int>(1);
  kernels::check_cuda(cudaMemsetAsync(flags, 0, sizeof(int), stream), "zero error flags");
  if (local_rows > 0) {
    std::int32_t* rows = s.rows.reserve_for<std::int32_t>(std::size_t(local_rows));
    std::uint16_t* gathered = s.gathered.reserve_for<std::uint16_t>(std::size_t(local_rows * w.k));
    float* product = s.product.reserve_for<float>(std::size_t(local_rows * w.n));
    std::uint16_t* w16 = s.w16.reserve_for<std::uint16_t>(std::size_t(w.k * w.n));
    kernels::check_cuda(cudaMemcpyAsync(rows, groups.rows.data(), groups.rows.size() * sizeof(std::int32_t),
                                        cudaMemcpyHostToDevice, stream), "upload row groups");
    detail::launch_gather_rows(args.a, w.k, rows, local_rows, args.a_row_divisor, gathered, stream);
    const float one = 1.0f;
    const float zero = 0.0f;
    for (std::int64_t e = 0; e < w.experts; ++e) {
      const std::int64_t first = groups.offset[std::size_t(e)];
      const std::int64_t count = groups.offset[std::size_t(e) + 1] - first;
      if (count == 0) continue;  // never touch an expert without rows
      detail::launch_dequantize(w, e, 1, w16, flags, stream);
      // Row-major C[count][N] = A[count][K]·W[K][N] is column-major C^T = W^T·A^T: W is an N×K
      // column-major matrix with ld N, A^T a K×count one with ld K, C^T N×count with ld N.
      check_cublas(cublasGemmEx(s.handle, CUBLAS_OP_N, CUBLAS_OP_N, int(w.n), int(count), int(w.k), &one, w16,
                                cuda_type(w.dtype), int(w.n), gathered + first * w.k, cuda_type(w.dtype), int(w.k),
                                &zero, product + first * w.n, CUDA_R_32F, int(w.n), CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx");
    }
    detail::launch_scatter_rows(product, w.n, rows, local_rows,
                                args.mul_topk_weights ? args.routing.topk_weights : nullptr, w.dtype, args.out_f32,
                                args.out16, stream);
  }
  int host_flags = 0;
  kernels::check_cuda(cudaMemcpyAsync(&host_flags, flags, sizeof(int), cudaMemcpyDeviceToHost, stream), "read error flags");
  kernels::check_cuda(cudaStreamSynchronize(stream), kWhere);
  detail::throw_on_dequant_errors(host_flags, kWhere);
}

}  // namespace moeval::reference
