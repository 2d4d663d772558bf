#include "python_kernel.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "layouts.h"
#include "moeval/testbed/device_routing.h"
#include "torch_views.h"

namespace moeval::python {
namespace {

using testbed::GuardedBuffer;

template <class T>
std::size_t element_bytes(const std::vector<T>&) {
  return sizeof(T);
}

// Every buffer of one prepared case, and the tensors the Python kernel sees.
class PreparedPython final : public testbed::PreparedGemm {
 public:
  PreparedPython(const PythonKernelSpec& spec, const GemmCase& c, int device)
      : spec_(spec),
        dtype_(c.problem.scheme.act),
        a_(GuardedBuffer::upload("a", device, c.a)),
        routing_(c, device, spec.block_size),
        out_shape_{std::size_t(c.routing.tokens * c.routing.topk), std::size_t(c.shape.n)} {
    Layout layout = pack_layout(c, spec.layout);
    for (Layout::Array& array : layout.arrays) {
      std::visit([&](const auto& v) {
        weights_.push_back(GuardedBuffer::upload(array.name, device, v.data(), v.size() * element_bytes(v), element_bytes(v)));
      }, array.data);
      shapes_.push_back(array.shape);
      // 16-bit arrays are scales (floats of the activation dtype); 32-bit words travel as int32,
      // as peers' kernels take them; bytes as uint8.
      dtypes_.push_back(std::visit([&](const auto& v) {
        return element_bytes(v) == 2 ? float16_dtype(dtype_) : element_bytes(v) == 4 ? int32_dtype() : uint8_dtype();
      }, array.data));
    }
    a_shape_ = {std::size_t(c.shape.m), std::size_t(c.shape.k)};
    info_["problem"] = c.problem;
    info_["layout"] = spec.layout;
    info_["attrs"] = layout.attrs;
    info_["dtype"] = std::string(to_string(dtype_));
    info_["n"] = c.shape.n;
    info_["k"] = c.shape.k;
    info_["top_k"] = c.a_row_divisor;
    info_["mul_topk_weights"] = c.mul_topk_weights;
    info_["num_experts"] = c.w.experts;
    info_["block_size"] = routing_.blocks().block_size;
    info_["sorted_capacity"] = routing_.blocks().sorted_capacity;
    info_["num_slots"] = routing_.blocks().num_slots;
    routing_shape_["topk_ids"] = {std::size_t(c.routing.tokens), std::size_t(c.routing.topk)};
    routing_shape_["topk_weights"] = routing_shape_["topk_ids"];
  }

  // Calls the Python kernel: moe_align first (our kernel, its own device guard), then kernel_fn.
  // No device guard here (kernel_under_test.h): the Python kernel must launch on its tensors' device.
  void run(GuardedBuffer& out) override {
    routing_.align();
    nb::dict inputs;
    inputs["a"] = torch_view(a_, a_shape_, float16_dtype(dtype_));
    for (std::size_t i = 0; i < weights_.size(); ++i) {
      inputs[weights_[i].name().c_str()] = torch_view(weights_[i], shapes_[i], dtypes_[i]);
    }
    for (const GuardedBuffer* b : routing_.buffers()) {
      const auto found = routing_shape_.find(b->name());
      const std::vector<std::size_t> shape = found != routing_shape_.end() ? found->second
                                                                            : std::vector<std::size_t>{b->bytes() / 4};
      inputs[b->name().c_str()] = torch_view(*b, shape, b->name() == "topk_weights" ? float32_dtype() : int32_dtype());
    }
    spec_.fn(inputs, torch_view(out, out_shape_, float16_dtype(dtype_)), info_);
  }

  std::vector<const GuardedBuffer*> buffers() const override {
    std::vector<const GuardedBuffer*> all{&a_};
    for (const GuardedBuffer& b : weights_) all.push_back(&b);
    for (const GuardedBuffer* b : routing_.buffers()) all.push_back(b);
    return all;
  }

 private:
  const PythonKernelSpec& spec_;
  DType dtype_;
  GuardedBuffer a_;
  std::vector<std::size_t> a_shape_;
  std::vector<GuardedBuffer> weights_;
  std::vector<std::vector<std::size_t>> shapes_;
  std::vector<nb::dlpack::dtype> dtypes_;
  testbed::DeviceRouting routing_;
  std::vector<std::size_t> out_shape_;
  std::map<std::string, std::vector<std::size_t>> routing_shape_;
  nb::dict info_;
};

class PythonKernel final : public testbed::GemmKernelUnderTest {
 public:
  explicit PythonKernel(PythonKernelSpec spec) : spec_(std::move(spec)) {}
  std::string name() const override { return spec_.name; }
  // The kernel's own word (supports), then the layout's: a scheme the layout cannot hold.
  std::string unsupported_reason(const GemmCase& c) const override {
    if (spec_.supports.is_valid() && !spec_.supports.is_none()) {
      const std::string why = nb::cast<std::string>(spec_.supports(c.problem));
      if (!why.empty()) return why;
    }
    try {
      pack_layout(c, spec_.layout);
    } catch (const std::invalid_argument& e) {
      return "the " + spec_.layout + " layout cannot hold this case: " + e.what();
    }
    return {};
  }
  std::unique_ptr<testbed::PreparedGemm> prepare(const GemmCase& c, int device) const override {
    return std::make_unique<PreparedPython>(spec_, c, device);
  }
  reference::NumericsContract contract() const override { return spec_.contract; }

 private:
  PythonKernelSpec spec_;
};

}  // namespace

std::shared_ptr<const testbed::GemmKernelUnderTest> make_python_kernel(PythonKernelSpec spec) {
  return std::make_shared<PythonKernel>(std::move(spec));
}

}  // namespace moeval::python
