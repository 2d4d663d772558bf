// Private: the checks both comparators make before looking at values.
#pragma once

#include "moeval/reference/matrix16.h"
#include "moeval/reference/reference_output.h"

namespace moeval::tolerance {

// Throws std::invalid_argument naming `comparator` on a shape or dtype mismatch between the kernel
// output and the reference, or a reference whose arrays do not match its own shape.
void check_compare_inputs(const char* comparator, const reference::Matrix16& observed,
                          const reference::ReferenceOutput& ref);

}  // namespace moeval::tolerance
