#include "moeval/golden/generate.h"

#include <set>
#include <stdexcept>

#include "moeval/fixtures/cases.h"
#include "moeval/golden/case_codec.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/reference/layer_reference.h"

namespace moeval::golden {
namespace {

std::vector<Layout> applicable(Family family, const QuantizedWeights& w) {
  std::vector<Layout> out;
  for (Layout layout : family_layouts(family)) {
    if (layout_applies(layout, w.scheme, w.k, w.n)) out.push_back(layout);
  }
  return out;
}

// A layer stores a layout only when it applies to both of its GEMMs.
std::vector<Layout> applicable(Family family, const QuantizedWeights& w13, const QuantizedWeights& w2) {
  std::vector<Layout> out;
  for (Layout layout : applicable(family, w13)) {
    if (layout_applies(layout, w2.scheme, w2.k, w2.n)) out.push_back(layout);
  }
  return out;
}

}  // namespace

std::vector<Layout> applicable_layouts(Family family, const GemmCase& c) { return applicable(family, c.w); }
std::vector<Layout> applicable_layouts(Family family, const LayerCase& c) { return applicable(family, c.w13, c.w2); }

CaseRecord generate_case(Family family, const MoeProblem& problem) {
  if (problem.kind == ProblemKind::layer) {
    const LayerCase c = build_layer_case(problem);
    return encode_layer_case(c, reference::layer_reference(c), applicable_layouts(family, c));
  }
  const GemmCase c = build_gemm_case(problem);
  return encode_gemm_case(c, reference::reference_gemm(c), applicable_layouts(family, c));
}

std::vector<CaseRecord> generate_family(Family family, const std::function<bool(const std::string&)>& select) {
  std::vector<CaseRecord> out;
  std::set<std::string> names;
  for (const MoeProblem& problem : corpus(family)) {
    const std::string name = problem.name();
    if (!names.insert(name).second) {
      throw std::logic_error("golden corpus: family " + std::string(to_string(family)) + " has two cases named " +
                             name);
    }
    if (!select || select(name)) out.push_back(generate_case(family, problem));
  }
  return out;
}

}  // namespace moeval::golden
