// The numerics contract of a kernel: where it rounds. The reference and the bound of the bounded
// tier model exactly the declared contract, so a correct kernel stays below ratio 1 under its own
// contract, while a kernel that rounds at another point than it declares does not.
//
// The default is moeval's own kernels' contract: W16 = fl16((u − z)·s), fp32 accumulation of exact
// products, the routing weight multiplied into the fp32 sum, ONE rounding to 16 bits, bitwise
// deterministic. Kernels written elsewhere differ, e.g. the widely used Marlin MoE kernel rounds
// the GEMM output to 16 bits and multiplies the routing weight afterwards (two roundings), and a
// split-K kernel with atomics is not deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "moeval/fixtures/scheme.h"

namespace moeval::reference {

// Where the routing weight ω of a routed row (GEMM2, mul_topk_weights) enters.
enum class RoutingWeightPoint : std::uint8_t {
  in_fp32_sum,            // y = fl16(ω · Σ_k a·w): into the fp32 sum, before the one rounding (ours)
  after_output_rounding,  // y = fl16(ω · fl16(Σ_k a·w)): the GEMM output is rounded first
};

// Whether two runs of the kernel on the same input must agree bit for bit.
enum class Determinism : std::uint8_t {
  required,  // a difference fails the case (ours: no atomics)
  reported,  // a difference is reported, not failed (e.g. split-K reductions with atomics)
};

struct NumericsContract {
  DequantRecipe dequant = DequantRecipe::sub_then_mul;
  RoutingWeightPoint routing_weight = RoutingWeightPoint::in_fp32_sum;
  Determinism determinism = Determinism::required;

  // "dequant=sub_then_mul routing_weight=in_fp32_sum determinism=required": what reports print.
  std::string name() const;
  // Parses name()'s form: space-separated key=value pairs in any order, missing keys keep their
  // default; throws std::invalid_argument naming the key or value and what is allowed.
  static NumericsContract parse(std::string_view text);
  bool operator==(const NumericsContract&) const = default;
};

std::string_view to_string(RoutingWeightPoint point);
std::string_view to_string(Determinism determinism);
RoutingWeightPoint parse_routing_weight_point(std::string_view text);
Determinism parse_determinism(std::string_view text);

// How many roundings to 16 bits one output element of a GEMM under `contract` went through, and
// whether its products a·w are exact in fp32: what the bound must allow for (tolerance/bound.h).
struct RoundingModel {
  int output_roundings = 1;    // 2 when the routing weight multiplies an already rounded output
  bool exact_products = true;  // false when w is an fp32 value (a·w then has up to 31 bits)
  bool operator==(const RoundingModel&) const = default;
};

// mul_topk_weights: whether the GEMM applies routing weights at all (only then does the routing
// point matter).
RoundingModel rounding_model(const NumericsContract& contract, bool mul_topk_weights);

}  // namespace moeval::reference
