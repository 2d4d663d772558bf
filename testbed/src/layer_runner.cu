#include "moeval/testbed/layer_runner.h"

#include <cuda_runtime.h>

#include <optional>

#include "moeval/fixtures/layouts/wna16.h"
#include "moeval/kernels/device_info.h"
#include "moeval/kernels/moe_forward.h"
#include "moeval/kernels/moe_ops.h"
#include "moeval/reference/combine_reference.h"
#include "moeval/reference/silu_and_mul_reference.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/dtype.h"
#include "moeval/testbed/marlin_kernel.h"
#include "moeval/testbed/wna16_kernel.h"
#include "moeval/tolerance/compare.h"

namespace moeval::testbed {
namespace {

GemmCase stage_gemm(const LayerCase& layer, ProblemKind kind, std::vector<std::uint16_t> a, Tier tier) {
  GemmCase c;
  c.problem = layer.problem;
  c.problem.kind = kind;
  c.problem.tier = tier;
  c.shape = c.problem.gemm();
  c.a_row_divisor = kind == ProblemKind::gemm1 ? layer.problem.topk : 1;
  c.mul_topk_weights = kind == ProblemKind::gemm2;
  c.a = std::move(a);
  c.w = kind == ProblemKind::gemm1 ? layer.w13 : layer.w2;
  c.routing = layer.routing;
  return c;
}

}  // namespace

bool LayerResult::pass() const {
  for (const auto& s : stages) {
    if (!s.pass()) return false;
  }
  return stages.size() == 4 && forward_matches_stages && forward_deterministic && memory_errors.empty() &&
         contract_errors.empty();
}

std::string LayerResult::summary() const {
  std::string s;
  for (const auto& st : stages) s += st.summary() + "\n";
  s += std::string("moe_forward: ") + (forward_matches_stages ? "equals the staged kernels bitwise" : "DIFFERS from the staged kernels") +
       ", " + (forward_deterministic ? "deterministic" : "NOT deterministic");
  for (const auto& e : memory_errors) s += "\n  memory: " + e;
  for (const auto& e : contract_errors) s += "\n  device: " + e;
  return s;
}

LayerResult run_layer_case(const LayerCase& layer, int device, const reference::LayerReference* stored,
                           kernels::MoeWeightFormat format) {
  const MoeProblem& p = layer.problem;
  const DType act = p.scheme.act;
  const std::string name = p.name();
  const std::int64_t slots = p.tokens * p.topk;
  LayerResult result;
  const bool marlin = format == kernels::MoeWeightFormat::marlin;
  const auto kernel = marlin ? make_marlin_kernel() : make_wna16_kernel();

  // Stage 1: GEMM1 in the problem's tier.
  const GemmCase g1_case = stage_gemm(layer, ProblemKind::gemm1, layer.x, p.tier);
  result.stages.push_back(run_gemm_case(*kernel, g1_case, device, stored ? &stored->gemm1 : nullptr));
  const std::vector<std::uint16_t> g1 = result.stages.back().output;

  // Stage 2: silu_and_mul on the kernel's GEMM1 output.
  const auto g1_in = GuardedBuffer::upload("gemm1_out", device, g1);
  const auto act_ref = reference::reference_silu_and_mul(reference::Matrix16{g1, slots, 2 * p.inter, act});
  result.stages.push_back(run_judged("silu_and_mul", name, device, Tier::bounded, act_ref, [&](GuardedBuffer& out) {
    kernels::silu_and_mul({g1_in.data(), out.data(), slots, p.inter, to_kernel_dtype(act), nullptr});
  }, {&g1_in}));
  const std::vector<std::uint16_t> act_out = result.stages.back().output;

  // Stage 3: GEMM2 on the kernel's intermediate (its inputs are no longer exact integers).
  result.stages.push_back(run_gemm_case(*kernel, stage_gemm(layer, ProblemKind::gemm2, act_out, Tier::bounded), device));
  const std::vector<std::uint16_t> g2 = result.stages.back().output;

  // Stage 4: combine the kernel's weighted GEMM2 rows.
  const auto g2_in = GuardedBuffer::upload("gemm2_out", device, g2);
  const auto out_ref = reference::reference_combine(reference::Matrix16{g2, slots, p.hidden, act}, p.topk);
  result.stages.push_back(run_judged("topk_combine", name, device, Tier::bounded, out_ref, [&](GuardedBuffer& out) {
    kernels::topk_combine({g2_in.data(), out.data(), p.tokens, int(p.topk), p.hidden, to_kernel_dtype(act), nullptr});
  }, {&g2_in}));
  const std::vector<std::uint16_t> staged_out = result.stages.back().output;

  // End to end: moe_forward must reproduce the staged kernels bit for bit.
  std::vector<GuardedBuffer> bufs;
  bufs.reserve(10);
  auto& x = bufs.emplace_back(GuardedBuffer::upload("x", device, layer.x));
  auto& ids = bufs.emplace_back(GuardedBuffer::upload("topk_ids", device, layer.routing.topk_ids));
  auto& weights = bufs.emplace_back(GuardedBuffer::upload("topk_weights", device, layer.routing.topk_weights));
  const GuardedBuffer* map = p.expert_map.empty() ? nullptr : &bufs.emplace_back(GuardedBuffer::upload("expert_map", device, p.expert_map));

  kernels::MoeForwardArgs args;
  args.shape = {p.tokens, p.hidden, p.inter, int(p.experts), int(p.topk)};
  args.hidden_states = x.data();
  args.topk_ids = ids.as<std::int32_t>();
  args.topk_weights = weights.as<float>();
  args.expert_map = map ? map->as<std::int32_t>() : nullptr;
  args.format = format;
  std::optional<MarlinDeviceWeights> m13, m2;
  if (marlin) {
    args.marlin_w13 = m13.emplace("w13", layer.w13, device).view();
    args.marlin_w2 = m2.emplace("w2", layer.w2, device).view();
  } else {
    const auto w13 = layouts::pack_wna16(layer.w13);
    const auto w2 = layouts::pack_wna16(layer.w2);
    auto& q13 = bufs.emplace_back(GuardedBuffer::upload("w13.qweight", device, w13.qweight));
    auto& s13 = bufs.emplace_back(GuardedBuffer::upload("w13.scales", device, w13.scales));
    auto& q2 = bufs.emplace_back(GuardedBuffer::upload("w2.qweight", device, w2.qweight));
    auto& s2 = bufs.emplace_back(GuardedBuffer::upload("w2.scales", device, w2.scales));
    const GuardedBuffer* z13 = w13.qzeros.empty() ? nullptr : &bufs.emplace_back(GuardedBuffer::upload("w13.qzeros", device, w13.qzeros));
    const GuardedBuffer* z2 = w2.qzeros.empty() ? nullptr : &bufs.emplace_back(GuardedBuffer::upload("w2.qzeros", device, w2.qzeros));
    const int bits = bits_of(p.scheme.type);
    args.w13 = {q13.as<std::uint8_t>(), s13.data(), z13 ? z13->as<std::uint8_t>() : nullptr, int(layer.w13.experts), bits, p.scheme.group_size};
    args.w2 = {q2.as<std::uint8_t>(), s2.data(), z2 ? z2->as<std::uint8_t>() : nullptr, int(layer.w2.experts), bits, p.scheme.group_size};
  }
  args.dtype = to_kernel_dtype(act);
  GuardedBuffer workspace("moe_forward.workspace", device, kernels::moe_forward_workspace_bytes(args), 4);
  GuardedBuffer out("moe_forward.out", device, std::size_t(p.tokens * p.hidden) * 2, 2);
  args.workspace = workspace.data();
  args.workspace_bytes = workspace.bytes();
  args.out = out.data();
  std::vector<std::uint16_t> runs[2];
  for (auto& bits_out : runs) {
    out.poison();
    {
      // Like every kernel call of the testbed: another device current whenever two exist.
      ForeignCurrentDevice caller(device);
      kernels::moe_forward(args);
      if (auto e = caller.check_restored("moe_forward"); !e.empty()) result.contract_errors.push_back(e);
      synchronize_device(caller.current(), "moe_forward (foreign current device)");
    }
    synchronize_device(device, "moe_forward");
    bits_out = out.download<std::uint16_t>();
  }
  result.forward_matches_stages = runs[0] == staged_out;
  result.forward_deterministic = runs[0] == runs[1];
  std::vector<const GuardedBuffer*> all{&workspace, &out};
  for (const auto& b : bufs) all.push_back(&b);
  for (const auto* m : {&m13, &m2}) {
    if (!*m) continue;
    for (const GuardedBuffer* b : (*m)->buffers()) all.push_back(b);
  }
  result.memory_errors = memory_errors(all);
  return result;
}

}  // namespace moeval::testbed
