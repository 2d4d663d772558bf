// The comparators: kernel output (16-bit bits) against a ReferenceOutput.
//
// Exact tier: every element must equal the reference's y16. Equality is bitwise, with two
// documented exceptions that cannot hide a layout, indexing or routing bug: +0 equals −0, and NaN
// equals NaN whatever the payload.
// Bounded tier: every element must satisfy the bound of bound.h. Non-finite values: an element
// passes only if the reference has the same non-finite value at the same place (NaN with NaN,
// ±Inf with the same-signed Inf from y or from y16's overflow); a finite output never matches a
// non-finite reference.
// Both throw std::invalid_argument when shapes or dtypes differ or the reference is inconsistent.
#pragma once

#include <vector>

#include "moeval/fixtures/problem.h"
#include "moeval/reference/matrix16.h"
#include "moeval/reference/reference_output.h"
#include "moeval/tolerance/bound.h"
#include "moeval/tolerance/verdict.h"

namespace moeval::tolerance {

Verdict compare_exact(const reference::Matrix16& observed, const reference::ReferenceOutput& ref);
Verdict compare_bounded(const reference::Matrix16& observed, const reference::ReferenceOutput& ref,
                        const BoundModel& model = {});
// Per element [rows][cols], what the tier's gate compares with 1: |value − y_ref| / bound in the
// bounded tier, 0 (equal) or +inf (different) in the exact tier. For reports that show where the
// violations are (rows, columns, a pattern); the Verdict is still the judgement.
std::vector<double> element_ratios(Tier tier, const reference::Matrix16& observed, const reference::ReferenceOutput& ref,
                                   const BoundModel& model = {});
// Dispatches on the problem's tier.
Verdict compare(Tier tier, const reference::Matrix16& observed, const reference::ReferenceOutput& ref,
                const BoundModel& model = {});

}  // namespace moeval::tolerance
