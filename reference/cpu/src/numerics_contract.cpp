#include "moeval/reference/numerics_contract.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace moeval::reference {
namespace {

[[noreturn]] void bad(std::string_view what, std::string_view value, std::string_view allowed) {
  throw std::invalid_argument("numerics contract: " + std::string(what) + " '" + std::string(value) +
                              "' is not supported; allowed: " + std::string(allowed));
}

}  // namespace

std::string_view to_string(RoutingWeightPoint point) {
  return point == RoutingWeightPoint::in_fp32_sum ? "in_fp32_sum" : "after_output_rounding";
}

std::string_view to_string(Determinism determinism) {
  return determinism == Determinism::required ? "required" : "reported";
}

RoutingWeightPoint parse_routing_weight_point(std::string_view text) {
  for (auto p : {RoutingWeightPoint::in_fp32_sum, RoutingWeightPoint::after_output_rounding}) {
    if (text == to_string(p)) return p;
  }
  bad("routing_weight", text, "in_fp32_sum, after_output_rounding");
}

Determinism parse_determinism(std::string_view text) {
  for (auto d : {Determinism::required, Determinism::reported}) {
    if (text == to_string(d)) return d;
  }
  bad("determinism", text, "required, reported");
}

std::string NumericsContract::name() const {
  return "dequant=" + std::string(to_string(dequant)) + " routing_weight=" + std::string(to_string(routing_weight)) +
         " determinism=" + std::string(to_string(determinism));
}

NumericsContract NumericsContract::parse(std::string_view text) {
  NumericsContract c;
  std::size_t at = 0;
  while (at < text.size()) {
    if (text[at] == ' ') {
      ++at;
      continue;
    }
    const std::size_t end = std::min(text.find(' ', at), text.size());
    const std::string_view item = text.substr(at, end - at);
    at = end;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) bad("item", item, "key=value with key dequant, routing_weight or determinism");
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "dequant") {
      try {
        c.dequant = parse_dequant_recipe(value);
      } catch (const std::invalid_argument&) {
        bad("dequant", value, "sub_then_mul, sub_then_mul_fp32, scaled_zero_fma");
      }
    } else if (key == "routing_weight") {
      c.routing_weight = parse_routing_weight_point(value);
    } else if (key == "determinism") {
      c.determinism = parse_determinism(value);
    } else {
      bad("key", key, "dequant, routing_weight, determinism");
    }
  }
  return c;
}

RoundingModel rounding_model(const NumericsContract& contract, bool mul_topk_weights) {
  RoundingModel m;
  if (mul_topk_weights && contract.routing_weight == RoutingWeightPoint::after_output_rounding) m.output_roundings = 2;
  m.exact_products = contract.dequant != DequantRecipe::sub_then_mul_fp32;
  return m;
}

}  // namespace moeval::reference
