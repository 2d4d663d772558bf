#include "moeval/testbed/wna16_kernel.h"

#include <optional>
#include <string>

#include "moeval/fixtures/layouts/wna16.h"
#include "moeval/kernels/wna16_moe.h"
#include "moeval/testbed/device_routing.h"
#include "moeval/testbed/dtype.h"

namespace moeval::testbed {
namespace {

// Every buffer of one prepared GEMM: inputs in the WNA16 layout, the routing, and moe_align's output.
class PreparedWna16 final : public PreparedGemm {
 public:
  PreparedWna16(const GemmCase& c, int device, int block_size)
      : packed_(layouts::pack_wna16(c.w)),
        a_(GuardedBuffer::upload("a", device, c.a)),
        qweight_(GuardedBuffer::upload("qweight", device, packed_.qweight)),
        scales_(GuardedBuffer::upload("scales", device, packed_.scales)),
        routing_(c, device, block_size) {
    if (!packed_.qzeros.empty()) qzeros_.emplace(GuardedBuffer::upload("qzeros", device, packed_.qzeros));
    gemm_.a = a_.data();
    gemm_.weights.qweight = qweight_.as<std::uint8_t>();
    gemm_.weights.scales = scales_.data();
    gemm_.weights.qzeros = qzeros_ ? qzeros_->as<std::uint8_t>() : nullptr;
    gemm_.weights.num_experts = int(c.w.experts);
    gemm_.weights.bits = bits_of(c.w.scheme.type);
    gemm_.weights.group_size = c.w.scheme.group_size;
    gemm_.blocks = routing_.blocks();
    gemm_.shape = {c.shape.n, c.shape.k};
    gemm_.top_k = int(c.a_row_divisor);
    gemm_.dtype = to_kernel_dtype(c.w.scheme.act);
    gemm_.topk_weights = routing_.topk_weights();
    gemm_.mul_topk_weights = c.mul_topk_weights;
  }

  // No device guard and no synchronization here (kernel_under_test.h): the kernels' own entry
  // points must make the data's device current, which is what the testbed tests.
  void run(GuardedBuffer& out) override {
    gemm_.c = out.data();
    routing_.align();
    kernels::wna16_moe(gemm_);
  }

  std::vector<const GuardedBuffer*> buffers() const override {
    std::vector<const GuardedBuffer*> all{&a_, &qweight_, &scales_};
    for (const GuardedBuffer* b : routing_.buffers()) all.push_back(b);
    if (qzeros_) all.push_back(&*qzeros_);
    return all;
  }

 private:
  layouts::Wna16Weights packed_;
  GuardedBuffer a_, qweight_, scales_;
  DeviceRouting routing_;
  std::optional<GuardedBuffer> qzeros_;
  kernels::Wna16MoeArgs gemm_{};
};

class Wna16Kernel final : public GemmKernelUnderTest {
 public:
  explicit Wna16Kernel(int block_size) : block_size_(block_size) {}
  std::string name() const override {
    return block_size_ == 0 ? kWna16KernelName : std::string(kWna16KernelName) + "-B" + std::to_string(block_size_);
  }
  // The layout has no g_idx, and the kernel's documented shape limits (kernels/wna16_moe.h).
  std::string unsupported_reason(const GemmCase& c) const override {
    if (c.w.scheme.act_order) return "act-order: the WNA16 layout carries no g_idx";
    const int k_align = bits_of(c.w.scheme.type) == 4 ? 32 : 16;
    if (c.shape.k % k_align != 0) return "K = " + std::to_string(c.shape.k) + " is not a multiple of " + std::to_string(k_align);
    if (c.shape.n % 16 != 0) return "N = " + std::to_string(c.shape.n) + " is not a multiple of 16";
    return {};
  }
  std::unique_ptr<PreparedGemm> prepare(const GemmCase& c, int device) const override {
    return std::make_unique<PreparedWna16>(c, device, block_size_);
  }

 private:
  int block_size_;
};

}  // namespace

std::shared_ptr<const GemmKernelUnderTest> make_wna16_kernel(int block_size) {
  return std::make_shared<Wna16Kernel>(block_size);
}

}  // namespace moeval::testbed
