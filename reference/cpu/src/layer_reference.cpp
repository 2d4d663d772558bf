#include "moeval/reference/layer_reference.h"

#include <stdexcept>
#include <string>

#include "moeval/reference/combine_reference.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/reference/routed_rows.h"
#include "moeval/reference/silu_and_mul_reference.h"

namespace moeval::reference {
namespace {

// The two weight sets must fit the problem's H and I (GEMM1: K = H, N = 2I; GEMM2: K = I, N = H).
void validate_layer(const LayerCase& layer) {
  const MoeProblem& p = layer.problem;
  auto require = [&](const QuantizedWeights& w, const char* name, std::int64_t k, std::int64_t n) {
    if (w.k != k || w.n != n) {
      throw std::invalid_argument(std::string("layer reference: ") + name + " is [K = " + std::to_string(w.k) +
                                  "][N = " + std::to_string(w.n) + "] but H = " + std::to_string(p.hidden) +
                                  ", I = " + std::to_string(p.inter) + " need [" + std::to_string(k) + "][" +
                                  std::to_string(n) + "]");
    }
  };
  require(layer.w13, "w13", p.hidden, 2 * p.inter);
  require(layer.w2, "w2", p.inter, p.hidden);
}

}  // namespace

ReferenceOutput layer_gemm1(const LayerCase& layer) {
  validate_layer(layer);
  const MoeProblem& p = layer.problem;
  // GEMM1 reads token row t / topk of x for routed row t, and applies no routing weight.
  const RoutedRows routed = RoutedRows::from_topk(layer.routing, p, p.topk);
  const Matrix16 x{layer.x, p.tokens, p.hidden, p.scheme.act};
  return reference_gemm(GemmOperands{x, layer.w13, routed, false});
}

ReferenceOutput layer_gemm2(const LayerCase& layer, const Matrix16& act) {
  validate_layer(layer);
  // GEMM2 reads its own row t of the intermediate and multiplies the routing weight.
  const RoutedRows routed = RoutedRows::from_topk(layer.routing, layer.problem, 1);
  return reference_gemm(GemmOperands{act, layer.w2, routed, true});
}

LayerReference layer_reference(const LayerCase& layer) {
  LayerReference r;
  r.gemm1 = layer_gemm1(layer);
  r.act = reference_silu_and_mul(r.gemm1.as_matrix16());
  r.gemm2 = layer_gemm2(layer, r.act.as_matrix16());
  r.out = reference_combine(r.gemm2.as_matrix16(), layer.problem.topk);
  return r;
}

}  // namespace moeval::reference
