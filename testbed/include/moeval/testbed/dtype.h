// fixtures' DType and the kernels' ActDType name the same two formats; kernels stay free of fixtures.
#pragma once

#include "moeval/fixtures/half.h"
#include "moeval/kernels/act_dtype.h"

namespace moeval::testbed {

constexpr kernels::ActDType to_kernel_dtype(DType d) {
  return d == DType::f16 ? kernels::ActDType::f16 : kernels::ActDType::bf16;
}

}  // namespace moeval::testbed
