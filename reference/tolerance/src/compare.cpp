#include "moeval/tolerance/compare.h"

namespace moeval::tolerance {

Verdict compare(Tier tier, const reference::Matrix16& observed, const reference::ReferenceOutput& ref,
                const BoundModel& model) {
  return tier == Tier::exact ? compare_exact(observed, ref) : compare_bounded(observed, ref, model);
}

}  // namespace moeval::tolerance
