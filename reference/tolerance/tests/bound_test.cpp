// element_bound against values worked out by hand from the formula in bound.h.
#include <gtest/gtest.h>

#include <cmath>

#include "moeval/tolerance/bound.h"

namespace moeval::tolerance {
namespace {

TEST(ElementBound, OutputRoundingTermAlone) {
  // S = 0: only u_out·|y_ref| remains: 2^-8·|−3| (bf16), 2^-11·3 (fp16).
  EXPECT_EQ(element_bound(-3.0, 0.0, 7, DType::bf16), 3.0 / 256.0);
  EXPECT_EQ(element_bound(3.0, 0.0, 7, DType::f16), 3.0 / 2048.0);
}

TEST(ElementBound, AccumulationTermAlone) {
  // y_ref = 0, S = 1, K = 4: (1 + 2^-11)·12·2^-24·√4 = (1 + 2^-11)·24·2^-24 in fp16.
  EXPECT_DOUBLE_EQ(element_bound(0.0, 1.0, 4, DType::f16), (1.0 + 0x1p-11) * 24.0 * 0x1p-24);
  // K = 7168, S = 2, bf16: (1 + 2^-8)·12·2^-24·√7168·2.
  EXPECT_DOUBLE_EQ(element_bound(0.0, 2.0, 7168, DType::bf16), (1.0 + 0x1p-8) * 12.0 * 0x1p-24 * std::sqrt(7168.0) * 2.0);
}

TEST(ElementBound, ModelConstantsAreUsed) {
  const BoundModel loose{24.0, 0x1p-24};
  EXPECT_DOUBLE_EQ(element_bound(0.0, 1.0, 1, DType::bf16, loose), 2.0 * element_bound(0.0, 1.0, 1, DType::bf16));
}

TEST(ElementBound, RejectsBadLengthAndDtype) {
  EXPECT_THROW(element_bound(1.0, 1.0, 0, DType::bf16), std::invalid_argument);
  EXPECT_THROW(element_bound(1.0, 1.0, 4, static_cast<DType>(7)), std::invalid_argument);
}

}  // namespace
}  // namespace moeval::tolerance
