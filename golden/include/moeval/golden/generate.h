// Regeneration of golden cases with the fixtures and the CPU reference, in memory.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/golden/corpus.h"
#include "moeval/golden/record.h"

namespace moeval::golden {

// The family's layouts that apply to a case (a layer: to both of its GEMMs), in family order.
std::vector<Layout> applicable_layouts(Family family, const GemmCase& c);
std::vector<Layout> applicable_layouts(Family family, const LayerCase& c);

// Builds the case (fixtures), runs the CPU reference and encodes it with the family's layouts.
CaseRecord generate_case(Family family, const MoeProblem& problem);

// Every case of the family whose name `select` accepts (all when `select` is empty), in corpus
// order. Throws std::logic_error if two problems of the family share a name.
std::vector<CaseRecord> generate_family(Family family, const std::function<bool(const std::string&)>& select = {});

}  // namespace moeval::golden
