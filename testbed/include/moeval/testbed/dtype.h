// The fixtures and the kernels name the same formats separately (kernels stay free of fixtures):
// activation dtypes (DType / ActDType) and Marlin weight types (WeightType / MarlinWeightType).
#pragma once

#include "moeval/fixtures/half.h"
#include "moeval/fixtures/scheme.h"
#include "moeval/kernels/act_dtype.h"
#include "moeval/kernels/marlin_moe.h"

namespace moeval::testbed {

constexpr kernels::ActDType to_kernel_dtype(DType d) {
  return d == DType::f16 ? kernels::ActDType::f16 : kernels::ActDType::bf16;
}

constexpr kernels::MarlinWeightType to_marlin_weight_type(WeightType t) {
  switch (t) {
    case WeightType::uint4b8: return kernels::MarlinWeightType::uint4b8;
    case WeightType::uint4: return kernels::MarlinWeightType::uint4;
    case WeightType::uint8b128: return kernels::MarlinWeightType::uint8b128;
    case WeightType::uint8: return kernels::MarlinWeightType::uint8;
  }
  return kernels::MarlinWeightType::uint4b8;
}

}  // namespace moeval::testbed
