// element_bound against values worked out by hand from the formula in bound.h.
#include <gtest/gtest.h>

#include <cmath>

#include "moeval/tolerance/bound.h"

namespace moeval::tolerance {
namespace {

TEST(ElementBound, OutputRoundingTermAlone) {
  // S = 0: u_out·|y_ref| plus half the smallest subnormal: 2^-8·|−3| + 2^-134 (bf16; the 2^-134
  // is below the last bit of 3/256 and vanishes), 2^-11·3 + 2^-25 (fp16).
  EXPECT_EQ(element_bound(-3.0, 0.0, 7, DType::bf16), 3.0 / 256.0);
  EXPECT_EQ(element_bound(3.0, 0.0, 7, DType::f16), 3.0 / 2048.0 + 0x1p-25);
}

TEST(ElementBound, AccumulationTermAlone) {
  // y_ref = 0, S = 1, K = 4: 2^-25 + (1 + 2^-11)·12·2^-24·√4 = 2^-25 + (1 + 2^-11)·24·2^-24 in fp16.
  EXPECT_DOUBLE_EQ(element_bound(0.0, 1.0, 4, DType::f16), 0x1p-25 + (1.0 + 0x1p-11) * 24.0 * 0x1p-24);
  // K = 7168, S = 2, bf16: (1 + 2^-8)·12·2^-24·√7168·2.
  EXPECT_DOUBLE_EQ(element_bound(0.0, 2.0, 7168, DType::bf16), (1.0 + 0x1p-8) * 12.0 * 0x1p-24 * std::sqrt(7168.0) * 2.0);
}

TEST(ElementBound, ModelConstantsAreUsed) {
  const BoundModel loose{24.0, 0x1p-24};
  // bf16: the 2^-134 underflow term is far below both and vanishes in the sums.
  EXPECT_DOUBLE_EQ(element_bound(0.0, 1.0, 1, DType::bf16, loose), 2.0 * element_bound(0.0, 1.0, 1, DType::bf16));
}

// Below the fp16 normal range (2^-14) outputs are spaced 2^-24 apart whatever their size: a correct
// rounding of 1.09512688e-06 (seen from silu_and_mul on an H200) lands on 1.07288361e-06 = 18·2^-24,
// 2.2e-8 away, which u_out·|y| alone (5.3e-10) would call a bug; half a subnormal (2.98e-8) covers
// it, and an error of one whole subnormal step (5.96e-8) still fails.
TEST(ElementBound, SubnormalOutputsGetHalfTheSmallestSpacing) {
  const double y_ref = 1.09512688e-06;
  const double bound = element_bound(y_ref, 0.0, 1, DType::f16);
  EXPECT_LE(std::fabs(18 * 0x1p-24 - y_ref), bound);
  EXPECT_GT(std::fabs(18 * 0x1p-24 - 0x1p-24 - y_ref), bound);
}

TEST(ElementBound, RejectsBadLengthAndDtype) {
  EXPECT_THROW(element_bound(1.0, 1.0, 0, DType::bf16), std::invalid_argument);
  EXPECT_THROW(element_bound(1.0, 1.0, 4, static_cast<DType>(7)), std::invalid_argument);
}

}  // namespace
}  // namespace moeval::tolerance
