// What a stray read past either end of a guarded buffer finds (cpu tier): a NaN of the buffer's
// element width in every guard element, so it poisons whatever it touches, and for 32-bit index
// buffers a value millions of elements away from any valid index.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "moeval/testbed/guarded_buffer.h"

namespace moeval::testbed {
namespace {

constexpr std::size_t kBytes = GuardedBuffer::kGuardBytes;

template <class T>
T element(const std::vector<std::uint8_t>& bytes, std::size_t j) {
  T v;
  std::memcpy(&v, bytes.data() + j * sizeof(T), sizeof(T));
  return v;
}

bool is_fp16_nan(std::uint16_t v) { return (v & 0x7C00u) == 0x7C00u && (v & 0x03FFu) != 0; }
bool is_bf16_nan(std::uint16_t v) { return (v & 0x7F80u) == 0x7F80u && (v & 0x007Fu) != 0; }

TEST(GuardPattern, SixteenBitGuardsAreNanAsFp16AndAsBf16) {
  for (bool after : {false, true}) {
    const auto g = guard_pattern(after, kBytes, 2);
    ASSERT_EQ(g.size(), kBytes);
    for (std::size_t j = 0; j < kBytes / 2; ++j) {
      const auto v = element<std::uint16_t>(g, j);
      ASSERT_TRUE(is_fp16_nan(v) && is_bf16_nan(v)) << "element " << j << " = " << std::hex << v;
    }
  }
}

TEST(GuardPattern, ThirtyTwoBitGuardsAreFp32NanAndFarOffIndices) {
  for (bool after : {false, true}) {
    const auto g = guard_pattern(after, kBytes, 4);
    for (std::size_t j = 0; j < kBytes / 4; ++j) {
      ASSERT_TRUE(std::isnan(element<float>(g, j))) << "element " << j;
      const std::int64_t as_index = element<std::int32_t>(g, j);
      ASSERT_TRUE(as_index >= (std::int64_t{1} << 31) - (std::int64_t{1} << 23) || as_index <= -(std::int64_t{1} << 22))
          << "element " << j << " as an int32 index: " << as_index;
    }
  }
}

// The guards still catch writes. A memset-like overrun writes one byte value: it goes unseen only
// where every byte it covers already holds that value. So no guard element (at the buffer's element
// width) is one byte repeated — a single element written with any constant changes its guard — and
// no constant covers as much as a third of either guard (a longer constant run is caught sooner).
// The two guards differ, so a copy of one over the other is caught too.
TEST(GuardPattern, ConstantOverrunsDifferFromEveryPattern) {
  for (std::size_t width : {1u, 2u, 4u}) {
    const auto before = guard_pattern(false, kBytes, width);
    const auto after = guard_pattern(true, kBytes, width);
    EXPECT_NE(before, after) << "width " << width;
    for (bool is_after : {false, true}) {
      const auto& g = is_after ? after : before;
      const char* which = is_after ? "after" : "before";
      if (width > 1) {
        for (std::size_t j = 0; j < kBytes / width; ++j) {
          bool one_byte_repeated = true;
          for (std::size_t b = 1; b < width; ++b) one_byte_repeated &= g[j * width + b] == g[j * width];
          ASSERT_FALSE(one_byte_repeated) << "width " << width << ", guard " << which << ", element " << j;
        }
      }
      for (int fill = 0; fill < 256; ++fill) {
        std::size_t same = 0;
        for (std::uint8_t b : g) same += b == fill;
        EXPECT_LT(same, kBytes / 3) << "width " << width << ", guard " << which << ", fill byte " << fill;
      }
    }
  }
}

}  // namespace
}  // namespace moeval::testbed
