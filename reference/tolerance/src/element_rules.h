// Private: the per-element rules of the two comparators, shared with element_ratios (compare.h) so
// a report's picture of the violations is exactly what the gate saw.
#pragma once

#include <cstdint>

namespace moeval::tolerance {

// Bounded tier: |value − y| / bound with the non-finite policy of compare.h. y16_value is the
// reference's own 16-bit rounding, which is ±Inf when a finite y overflows the output type.
double bounded_element_ratio(double value, double y, double y16_value, double bound);
// Exact tier: equal bits, or both NaN (payloads may differ), or +0 against −0.
bool exact_same_value(double got, double want, std::uint16_t got_bits, std::uint16_t want_bits);

}  // namespace moeval::tolerance
