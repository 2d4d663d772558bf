// The canaries themselves must have power: an overrun by one element on either side is caught,
// an in-bounds write is not flagged, and a modified input is named.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include "moeval/testbed/devices.h"
#include "moeval/testbed/guarded_buffer.h"

namespace moeval::testbed {
namespace {

__global__ void write_at(std::uint16_t* p, long long index, std::uint16_t value) { p[index] = value; }

TEST(GuardedBuffer, InBoundsWritesKeepGuardsIntact) {
  MOEVAL_REQUIRE_GPUS(1);
  GuardedBuffer out("out", 0, 100 * sizeof(std::uint16_t));
  write_at<<<1, 1>>>(out.as<std::uint16_t>(), 0, 1);
  write_at<<<1, 1>>>(out.as<std::uint16_t>(), 99, 1);
  EXPECT_EQ(out.check_guards(), "");
  const auto host = out.download<std::uint16_t>();
  EXPECT_EQ(host[0], 1);
  EXPECT_EQ(host[50], 0xFFFF) << "payload must be poisoned";
}

TEST(GuardedBuffer, OverrunOnEitherSideIsNamed) {
  MOEVAL_REQUIRE_GPUS(1);
  GuardedBuffer out("out", 0, 100 * sizeof(std::uint16_t));
  write_at<<<1, 1>>>(out.as<std::uint16_t>(), 100, 7);
  EXPECT_EQ(out.check_guards(), "out: guard after payload overwritten at byte offset 200 (2 bytes differ)");
  GuardedBuffer under("under", 0, 64);
  write_at<<<1, 1>>>(under.as<std::uint16_t>(), -1, 7);
  EXPECT_NE(under.check_guards().find("under: guard before payload overwritten at byte offset -2"), std::string::npos);
}

__global__ void read_at(const std::uint16_t* p, long long index, std::uint16_t* to) { *to = p[index]; }

// A stray read one element before or after a 16-bit input finds a NaN (fp16 and bf16), so it
// poisons the output it feeds (guard_pattern_test checks every element of the pattern).
TEST(GuardedBuffer, ReadsPastEitherEndFindNan) {
  MOEVAL_REQUIRE_GPUS(1);
  const std::vector<std::uint16_t> host(40, 0x3C00);
  auto in = GuardedBuffer::upload("a", 0, host);
  GuardedBuffer seen("seen", 0, 2 * sizeof(std::uint16_t), 2, 0);
  read_at<<<1, 1>>>(in.as<std::uint16_t>(), -1, seen.as<std::uint16_t>());
  read_at<<<1, 1>>>(in.as<std::uint16_t>(), 40, seen.as<std::uint16_t>() + 1);
  for (std::uint16_t v : seen.download<std::uint16_t>()) {
    EXPECT_TRUE((v & 0x7F80u) == 0x7F80u && (v & 0x7Fu) != 0 && (v & 0x3FFu) != 0) << std::hex << v;
  }
}

// Exact-size mode (the sanitize tier): no canaries, the payload fenced for compute-sanitizer
// instead (whether memcheck then sees a read past it: SanitizeFence in sanitize_gpu_tests); the
// guard check has nothing to compare.
TEST(GuardedBuffer, ExactSizeModeHasNoCanaries) {
  MOEVAL_REQUIRE_GPUS(1);
  GuardedBuffer::set_exact_size(true);
  GuardedBuffer exact("exact", 0, 100, 2);
  GuardedBuffer::set_exact_size(false);
  GuardedBuffer guarded("guarded", 0, 100, 2);
  EXPECT_EQ(exact.guard_bytes(), 0u);
  EXPECT_EQ(exact.check_guards(), "");
  EXPECT_EQ(guarded.guard_bytes(), GuardedBuffer::kGuardBytes);
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, exact.data()), cudaSuccess);
  EXPECT_EQ(attr.devicePointer, exact.data());
}

TEST(GuardedBuffer, ModifiedInputIsNamed) {
  MOEVAL_REQUIRE_GPUS(1);
  const std::vector<std::uint16_t> host(32, 3);
  auto in = GuardedBuffer::upload("a", 0, host);
  EXPECT_EQ(in.check_unchanged(), "");
  write_at<<<1, 1>>>(in.as<std::uint16_t>(), 5, 9);
  EXPECT_EQ(in.check_unchanged(), "a: input modified at byte 10 (was 3, now 9)");
}

}  // namespace
}  // namespace moeval::testbed
