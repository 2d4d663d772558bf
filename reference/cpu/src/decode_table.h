// Private: 16-bit bits -> double through a 65536-entry table per dtype.
//
// The layer reference decodes hundreds of millions of weights (DeepSeek-V3: 8 experts × 44M); a
// table load is several times cheaper than to_double's bit fiddling and gives the same values.
#pragma once

#include <cstdint>

#include "moeval/fixtures/half.h"

namespace moeval::reference {

// The table for `dtype`, built once (thread-safe static initialisation).
const double* decode_table(DType dtype);

}  // namespace moeval::reference
