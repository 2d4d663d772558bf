// The adapter: declare what the kernel supports and where it rounds, pack a case into the kernel's
// layout in guarded device buffers, and call the kernel's entry point the way a user would.
#include "external_wna16.h"

#include <optional>

#include "moeval/fixtures/layouts/wna16.h"
#include "moeval/kernels/wna16_moe.h"
#include "moeval/testbed/device_routing.h"
#include "moeval/testbed/dtype.h"

namespace consumer {
namespace {

using moeval::testbed::GuardedBuffer;

class Prepared final : public moeval::testbed::PreparedGemm {
 public:
  Prepared(const moeval::GemmCase& c, int device)
      : packed_(moeval::layouts::pack_wna16(c.w)),
        a_(GuardedBuffer::upload("a", device, c.a)),
        qweight_(GuardedBuffer::upload("qweight", device, packed_.qweight)),
        scales_(GuardedBuffer::upload("scales", device, packed_.scales)),
        routing_(c, device, /*block_size=*/16) {
    if (!packed_.qzeros.empty()) qzeros_.emplace(GuardedBuffer::upload("qzeros", device, packed_.qzeros));
    args_.a = a_.data();
    args_.weights = {qweight_.as<std::uint8_t>(), scales_.data(), qzeros_ ? qzeros_->as<std::uint8_t>() : nullptr,
                     int(c.w.experts), moeval::bits_of(c.w.scheme.type), c.w.scheme.group_size};
    args_.blocks = routing_.blocks();
    args_.shape = {c.shape.n, c.shape.k};
    args_.top_k = int(c.a_row_divisor);
    args_.dtype = moeval::testbed::to_kernel_dtype(c.w.scheme.act);
    args_.topk_weights = routing_.topk_weights();
    args_.mul_topk_weights = c.mul_topk_weights;
  }
  // No device guard here: the kernel's entry point must make its data's device current.
  void run(GuardedBuffer& out) override {
    args_.c = out.data();
    routing_.align();
    moeval::kernels::wna16_moe(args_);
  }
  std::vector<const GuardedBuffer*> buffers() const override {
    std::vector<const GuardedBuffer*> all{&a_, &qweight_, &scales_};
    for (const GuardedBuffer* b : routing_.buffers()) all.push_back(b);
    if (qzeros_) all.push_back(&*qzeros_);
    return all;
  }

 private:
  moeval::layouts::Wna16Weights packed_;
  GuardedBuffer a_, qweight_, scales_;
  moeval::testbed::DeviceRouting routing_;
  std::optional<GuardedBuffer> qzeros_;
  moeval::kernels::Wna16MoeArgs args_{};
};

class ExternalWna16 final : public moeval::testbed::GemmKernelUnderTest {
 public:
  std::string name() const override { return "external_wna16"; }
  std::string unsupported_reason(const moeval::GemmCase& c) const override {
    return c.w.scheme.act_order ? "act-order: the WNA16 layout carries no g_idx" : "";
  }
  std::unique_ptr<moeval::testbed::PreparedGemm> prepare(const moeval::GemmCase& c, int device) const override {
    return std::make_unique<Prepared>(c, device);
  }
  // Where it rounds: moeval's default contract (weight into the fp32 sum, one rounding).
  moeval::reference::NumericsContract contract() const override { return {}; }
};

}  // namespace

std::shared_ptr<const moeval::testbed::GemmKernelUnderTest> make_external_wna16() {
  return std::make_shared<ExternalWna16>();
}

}  // namespace consumer
