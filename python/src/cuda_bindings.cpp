// The CUDA build's part of the module (moeval/cuda.py wraps it): visible devices, guarded device
// buffers, our WNA16 and Marlin kernels on torch tensors, the cuBLAS reference, our kernels through
// the C++ testbed, and check(): a Python kernel run over a matrix by the same runner.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <stdexcept>

#include "arrays.h"
#include "bindings.h"
#include "moeval/kernels/marlin_moe.h"
#include "moeval/kernels/wna16_moe.h"
#include "moeval/reference/cublas_reference.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/case_runner.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/dtype.h"
#include "moeval/testbed/kernel_under_test.h"
#include "python_kernel.h"
#include "torch_views.h"

namespace moeval::python {
namespace {

using testbed::GuardedBuffer;
using DeviceTensor = nb::ndarray<nb::device::cuda, nb::c_contig>;

template <class T>
const T* ptr(const std::optional<DeviceTensor>& t) {
  return t ? static_cast<const T*>(t->data()) : nullptr;
}

// moe_align's output as the GEMMs read it, from the tensors a Python kernel was handed.
kernels::MoeBlocks blocks_of(const DeviceTensor& sorted_token_ids, const DeviceTensor& expert_ids,
                             const DeviceTensor& num_tokens_post_padded, int block_size, std::int64_t num_slots) {
  return {static_cast<const std::int32_t*>(sorted_token_ids.data()), static_cast<const std::int32_t*>(expert_ids.data()),
          static_cast<const std::int32_t*>(num_tokens_post_padded.data()), std::int64_t(sorted_token_ids.size()),
          block_size, num_slots};
}

kernels::ActDType act_of(const std::string& dtype) { return testbed::to_kernel_dtype(parse_dtype(nul_escaped(dtype))); }

// Our registered kernel of that name; an unknown name is a ValueError naming ours.
std::shared_ptr<const testbed::GemmKernelUnderTest> builtin_kernel(const std::string& kernel_name) {
  testbed::register_builtin_kernels();
  const auto kernel = testbed::KernelRegistry::instance().find(kernel_name);
  if (!kernel) {
    throw std::invalid_argument("kernel '" + nul_escaped(kernel_name) + "' is not registered; ours: wna16_moe, marlin_moe");
  }
  return kernel;
}

// Every entry point that takes a device index asks here first. Without it a machine without the
// driver answered "cudaErrorInsufficientDriver (CUDA driver version is insufficient ...)", which
// sends people to upgrade a driver they do not have, and an index past the last device got CUDA's
// "invalid device ordinal" from deep inside.
void require_device(const char* who, int device) {
  const testbed::DeviceCount& visible = testbed::visible_devices();
  if (visible.count == 0) throw std::runtime_error(std::string(who) + ": " + visible.reason);
  if (device < 0 || device >= visible.count) {
    throw std::invalid_argument(std::string(who) + ": device " + std::to_string(device) +
                                " does not exist; allowed: 0.." + std::to_string(visible.count - 1));
  }
}

}  // namespace

void bind_cuda(nb::module_& m) {
  m.def("device_count", [] { return testbed::visible_devices().count; });
  m.def("no_device_reason", [] { return testbed::visible_devices().reason; });

  nb::class_<GuardedBuffer>(m, "GuardedBuffer",
                            "Device memory with 64 KiB NaN guards on both sides; remembers what was uploaded.")
      .def_static("upload", [](const std::string& name, int device, const nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>& host) {
        require_device("GuardedBuffer.upload", device);
        return GuardedBuffer::upload(name, device, host.data(), host.nbytes(), host.itemsize());
      }, nb::arg("name"), nb::arg("device"), nb::arg("host"))
      .def("__init__", [](GuardedBuffer* self, const std::string& name, int device, std::size_t bytes, std::size_t element_bytes) {
        require_device("GuardedBuffer", device);
        new (self) GuardedBuffer(name, device, bytes, element_bytes);
      }, nb::arg("name"), nb::arg("device"), nb::arg("bytes"), nb::arg("element_bytes") = 2,
         "A poisoned (all-NaN) buffer, e.g. for a kernel's output")
      .def_prop_ro("name", &GuardedBuffer::name)
      .def_prop_ro("device", &GuardedBuffer::device)
      .def_prop_ro("bytes", &GuardedBuffer::bytes)
      .def("tensor", [](const GuardedBuffer& b, std::vector<std::size_t> shape, const std::string& dtype) {
        std::size_t n = 1;
        for (std::size_t d : shape) n *= d;
        const nb::dlpack::dtype dt = dtype == "int32" ? int32_dtype() : dtype == "uint8" ? uint8_dtype()
                                     : dtype == "float32" ? float32_dtype() : float16_dtype(parse_dtype(nul_escaped(dtype)));
        if (n * dt.bits / 8 != b.bytes()) {
          throw std::invalid_argument("GuardedBuffer.tensor: shape holds " + std::to_string(n * dt.bits / 8) +
                                      " bytes of " + nul_escaped(dtype) + " but the buffer '" + b.name() + "' holds " + std::to_string(b.bytes()));
        }
        // The buffer's Python object owns the view: a tensor kept after `del buffer` must not point
        // at freed device memory (it did before 2026-12-05).
        return torch_view(b, shape, dt, nb::find(b));
      }, nb::arg("shape"), nb::arg("dtype"), "A torch tensor viewing the payload; it keeps the buffer alive")
      .def("poison", [](GuardedBuffer& b) { b.poison(); })
      .def("check_guards", &GuardedBuffer::check_guards, "'' when both guards are intact, else what was overwritten")
      .def("check_unchanged", &GuardedBuffer::check_unchanged, "'' when an uploaded payload is unchanged");

  nb::class_<testbed::CaseResult>(m, "CaseResult", "One case run by the testbed on one device.")
      .def_ro("kernel", &testbed::CaseResult::kernel)
      .def_ro("case_name", &testbed::CaseResult::case_name)
      .def_ro("device", &testbed::CaseResult::device)
      .def_ro("verdict", &testbed::CaseResult::verdict)
      .def_ro("memory_errors", &testbed::CaseResult::memory_errors)
      .def_ro("contract_errors", &testbed::CaseResult::contract_errors)
      .def_prop_ro("output", [](const testbed::CaseResult& r) {
        return view(r.output, {r.output.size() / std::size_t(std::max<std::int64_t>(r.verdict.cols, 1)), std::size_t(r.verdict.cols)},
                    nb::find(r));
      }, "the first run's output bits [rows, cols]")
      .def_prop_ro("passed", &testbed::CaseResult::pass)
      .def("summary", &testbed::CaseResult::summary);

  m.def("run_builtin", [](const std::string& kernel_name, const MoeProblem& problem, int device) -> nb::object {
    require_device("run_builtin", device);
    const auto kernel = builtin_kernel(kernel_name);
    const GemmCase c = naming_memory("run_builtin", problem, [&] { return build_gemm_case(problem); });
    if (const std::string why = kernel->unsupported_reason(c); !why.empty()) return nb::cast("unsupported: " + why);
    return nb::cast(testbed::run_gemm_case(*kernel, c, device));
  }, nb::arg("kernel"), nb::arg("problem"), nb::arg("device"),
     "Our kernel through the C++ testbed: a CaseResult, or the reason it does not support the case");

  m.def("builtin_unsupported_reason", [](const std::string& kernel_name, const MoeProblem& problem) {
    const auto kernel = builtin_kernel(kernel_name);
    return kernel->unsupported_reason(naming_memory("builtin_unsupported_reason", problem, [&] { return build_gemm_case(problem); }));
  }, nb::arg("kernel"), nb::arg("problem"), "Why our kernel declines a problem ('' when it runs it)");

  m.def("run_python", [](nb::object fn, const MoeProblem& problem, int device, const std::string& layout,
                         const reference::NumericsContract& contract, int block_size, const std::string& name,
                         nb::object supports) -> nb::object {
    require_device("run_python", device);
    const auto kernel = make_python_kernel({fn, supports, name, nul_escaped(layout), contract, block_size});
    const GemmCase c = naming_memory("run_python", problem, [&] { return build_gemm_case(problem); });
    if (const std::string why = kernel->unsupported_reason(c); !why.empty()) return nb::cast("unsupported: " + why);
    return nb::cast(testbed::run_gemm_case(*kernel, c, device));
  }, nb::arg("fn"), nb::arg("problem"), nb::arg("device"), nb::arg("layout"), nb::arg("contract"), nb::arg("block_size"),
     nb::arg("name"), nb::arg("supports").none(),
     "A Python kernel on one case through the C++ testbed (see moeval.cuda.check)");

  m.def("cublas_reference", [](const GemmCase& c, int device) {
    require_device("cublas_reference", device);
    reference::CublasGemmResult r = reference::cublas_reference_gemm(c, device);
    return owned(std::move(r.out16), {std::size_t(r.rows), std::size_t(r.cols)});
  }, nb::arg("case"), nb::arg("device"), "The cuBLAS path's 16-bit output [rows, cols] (dequantize + GEMM in fp32)");

  m.def("wna16_moe", [](const DeviceTensor& a, DeviceTensor& out, const DeviceTensor& qweight, const DeviceTensor& scales,
                        const std::optional<DeviceTensor>& qzeros, const DeviceTensor& sorted_token_ids,
                        const DeviceTensor& expert_ids, const DeviceTensor& num_tokens_post_padded,
                        const DeviceTensor& topk_weights, int num_experts, int bits, int group_size, std::int64_t n,
                        std::int64_t k, int top_k, const std::string& dtype, int block_size, std::int64_t num_slots,
                        bool mul_topk_weights) {
    kernels::Wna16MoeArgs args;
    args.a = a.data();
    args.c = out.data();
    args.weights = {static_cast<const std::uint8_t*>(qweight.data()), scales.data(), ptr<std::uint8_t>(qzeros),
                    num_experts, bits, group_size};
    args.blocks = blocks_of(sorted_token_ids, expert_ids, num_tokens_post_padded, block_size, num_slots);
    args.shape = {n, k};
    args.top_k = top_k;
    args.dtype = act_of(dtype);
    args.topk_weights = static_cast<const float*>(topk_weights.data());
    args.mul_topk_weights = mul_topk_weights;
    kernels::wna16_moe(args);
  }, nb::arg("a"), nb::arg("out"), nb::arg("qweight"), nb::arg("scales"), nb::arg("qzeros").none(),
     nb::arg("sorted_token_ids"), nb::arg("expert_ids"), nb::arg("num_tokens_post_padded"), nb::arg("topk_weights"),
     nb::arg("num_experts"), nb::arg("bits"), nb::arg("group_size"), nb::arg("n"), nb::arg("k"), nb::arg("top_k"),
     nb::arg("dtype"), nb::arg("block_size"), nb::arg("num_slots"), nb::arg("mul_topk_weights"),
     "Our WNA16 MoE GEMM on device tensors (kernels/wna16_moe.h); launches on the tensors' device");

  m.def("marlin_moe_workspace_bytes", [](std::int64_t num_slots, std::int64_t n, std::int64_t k, bool act_order,
                                          bool is_k_full, int block_size) {
    kernels::MarlinMoeArgs args;
    args.blocks.num_slots = num_slots;
    args.blocks.block_size = block_size;
    args.shape = {n, k};
    args.weights.act_order = act_order;
    args.weights.is_k_full = is_k_full;
    return kernels::marlin_moe_workspace_bytes(args);
  }, nb::arg("num_slots"), nb::arg("n"), nb::arg("k"), nb::arg("act_order"), nb::arg("is_k_full"), nb::arg("block_size"));

  m.def("marlin_moe", [](const DeviceTensor& a, DeviceTensor& out, const DeviceTensor& qweight, const DeviceTensor& scales,
                         const std::optional<DeviceTensor>& zeros, const std::optional<DeviceTensor>& g_idx,
                         const std::optional<DeviceTensor>& perm, const DeviceTensor& sorted_token_ids,
                         const DeviceTensor& expert_ids, const DeviceTensor& num_tokens_post_padded,
                         const DeviceTensor& topk_weights, const std::optional<DeviceTensor>& workspace, int num_experts,
                         const std::string& weight_type, int group_size, int num_groups, bool act_order, bool is_k_full,
                         std::int64_t n, std::int64_t k, int top_k, const std::string& dtype, int block_size,
                         std::int64_t num_slots, bool mul_topk_weights) {
    kernels::MarlinMoeArgs args;
    args.a = a.data();
    args.c = out.data();
    args.weights.qweight = static_cast<const std::uint32_t*>(qweight.data());
    args.weights.scales = scales.data();
    args.weights.zeros = ptr<std::uint32_t>(zeros);
    args.weights.g_idx = ptr<std::int32_t>(g_idx);
    args.weights.perm = ptr<std::int32_t>(perm);
    args.weights.num_experts = num_experts;
    args.weights.type = testbed::to_marlin_weight_type(parse_weight_type(nul_escaped(weight_type)));
    args.weights.group_size = group_size;
    args.weights.num_groups = num_groups;
    args.weights.act_order = act_order;
    args.weights.is_k_full = is_k_full;
    args.blocks = blocks_of(sorted_token_ids, expert_ids, num_tokens_post_padded, block_size, num_slots);
    args.shape = {n, k};
    args.top_k = top_k;
    args.dtype = act_of(dtype);
    args.topk_weights = static_cast<const float*>(topk_weights.data());
    args.mul_topk_weights = mul_topk_weights;
    args.workspace = workspace ? workspace->data() : nullptr;
    args.workspace_bytes = workspace ? workspace->nbytes() : 0;
    kernels::marlin_moe(args);
  }, nb::arg("a"), nb::arg("out"), nb::arg("qweight"), nb::arg("scales"), nb::arg("zeros").none(), nb::arg("g_idx").none(),
     nb::arg("perm").none(), nb::arg("sorted_token_ids"), nb::arg("expert_ids"), nb::arg("num_tokens_post_padded"),
     nb::arg("topk_weights"), nb::arg("workspace").none(), nb::arg("num_experts"), nb::arg("weight_type"),
     nb::arg("group_size"), nb::arg("num_groups"), nb::arg("act_order"), nb::arg("is_k_full"), nb::arg("n"), nb::arg("k"),
     nb::arg("top_k"), nb::arg("dtype"), nb::arg("block_size"), nb::arg("num_slots"), nb::arg("mul_topk_weights"),
     "Our Marlin MoE GEMM on device tensors (kernels/marlin_moe.h)");
}

}  // namespace moeval::python
