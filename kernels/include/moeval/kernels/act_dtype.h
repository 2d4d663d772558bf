// The 16-bit activation dtype of a kernel call (activations, scales, outputs share it).
//
// Kernels depend on nothing of ours, so this mirrors fixtures' DType instead of including it; the
// testbed maps one onto the other.
#pragma once

#include <cstdint>

namespace moeval::kernels {

enum class ActDType : std::uint8_t { f16, bf16 };

constexpr const char* to_string(ActDType t) { return t == ActDType::f16 ? "fp16" : "bf16"; }

}  // namespace moeval::kernels
