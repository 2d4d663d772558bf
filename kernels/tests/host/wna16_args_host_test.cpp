// wna16_moe's argument checks in the cpu tier: they run before any device access, so fake device
// pointers suffice. One ctest entry per rule, each changing one argument of a valid call and
// requiring that rule's own message — a bare "throws" would pass where another rule happens to
// refuse the same call (K = 112 with group 128 is refused by the group rule too; here the
// K-alignment probe is channelwise so only the K rule can refuse it). The baseline case shows the
// valid call gets past every argument check to the device check.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "moeval/kernels/wna16_moe.h"

namespace moeval::kernels {
namespace {

struct Wna16ArgCase {
  const char* name;
  std::function<void(Wna16MoeArgs&)> change;
  const char* message;
};

Wna16MoeArgs valid_args() {
  void* fake = reinterpret_cast<void*>(std::uintptr_t{1} << 20);  // 16-byte aligned, never dereferenced
  const auto* ids = static_cast<const std::int32_t*>(fake);
  Wna16MoeArgs args;
  args.a = fake;
  args.c = fake;
  args.weights = {static_cast<const std::uint8_t*>(fake), fake, nullptr, 4, 4, 128};
  args.blocks = {ids, ids, ids, 64, 16, 8};
  args.shape = {128, 256};
  args.top_k = 2;
  return args;
}

std::string error_of(const Wna16MoeArgs& args) {
  try {
    wna16_moe(args);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

const Wna16ArgCase kCases[] = {
    {"bits3", [](Wna16MoeArgs& a) { a.weights.bits = 3; }, "wna16_moe: bits = 3; allowed 4 or 8"},
    {"experts0", [](Wna16MoeArgs& a) { a.weights.num_experts = 0; }, "wna16_moe: weights.num_experts = 0; must be ≥ 1"},
    {"n40", [](Wna16MoeArgs& a) { a.shape.n = 40; }, "wna16_moe: N = 40; must be a positive multiple of 16"},
    {"n0", [](Wna16MoeArgs& a) { a.shape.n = 0; }, "wna16_moe: N = 0; must be a positive multiple of 16"},
    {"k112_int4_channelwise",
     [](Wna16MoeArgs& a) {
       a.weights.group_size = -1;
       a.shape.k = 112;
     },
     "wna16_moe: K = 112; must be a positive multiple of 32 for 4-bit weights"},
    {"k8_int8_channelwise",
     [](Wna16MoeArgs& a) {
       a.weights.bits = 8;
       a.weights.group_size = -1;
       a.shape.k = 8;
     },
     "wna16_moe: K = 8; must be a positive multiple of 16 for 8-bit weights"},
    {"k2pow30", [](Wna16MoeArgs& a) { a.shape.k = std::int64_t{1} << 30; }, "wna16_moe: N and K must be < 2^30"},
    {"group96", [](Wna16MoeArgs& a) { a.weights.group_size = 96; },
     "wna16_moe: group_size = 96; allowed 32, 64, 128 or -1 (channelwise)"},
    {"k192_group128", [](Wna16MoeArgs& a) { a.shape.k = 192; }, "wna16_moe: K = 192 is not a multiple of group_size = 128"},
    {"block24", [](Wna16MoeArgs& a) { a.blocks.block_size = 24; },
     "wna16_moe: blocks.block_size = 24; allowed 8, 16, 32, 48, 64, 128"},
    {"topk0", [](Wna16MoeArgs& a) { a.top_k = 0; }, "wna16_moe: top_k = 0; must be ≥ 1"},
    {"slots_negative", [](Wna16MoeArgs& a) { a.blocks.num_slots = -2; }, "wna16_moe: blocks.num_slots = -2 is negative"},
    {"slots_not_a_multiple_of_topk", [](Wna16MoeArgs& a) { a.blocks.num_slots = 7; },
     "wna16_moe: blocks.num_slots = 7 is not a multiple of top_k = 2"},
    {"capacity_negative", [](Wna16MoeArgs& a) { a.blocks.sorted_capacity = -1; },
     "wna16_moe: blocks.sorted_capacity = -1 is negative"},
    {"mul_without_weights", [](Wna16MoeArgs& a) { a.mul_topk_weights = true; },
     "wna16_moe: mul_topk_weights is set but topk_weights is null"},
    {"qweight_misaligned",
     [](Wna16MoeArgs& a) { a.weights.qweight = static_cast<const std::uint8_t*>(a.weights.qweight) + 8; },
     "wna16_moe: qweight must be 16-byte aligned"},
    {"a_misaligned", [](Wna16MoeArgs& a) { a.a = static_cast<const char*>(a.a) + 4; }, "wna16_moe: a must be 16-byte aligned"},
    {"c_odd", [](Wna16MoeArgs& a) { a.c = static_cast<char*>(a.c) + 1; }, "wna16_moe: c and scales must be 2-byte aligned"},
    {"scales_odd", [](Wna16MoeArgs& a) { a.weights.scales = static_cast<const char*>(a.weights.scales) + 1; },
     "wna16_moe: c and scales must be 2-byte aligned"},
    // The first buffer of the device check: a null pointer is refused before CUDA is asked.
    {"a_null", [](Wna16MoeArgs& a) { a.a = nullptr; }, "wna16_moe: a is a null pointer; a device buffer is required"},
};

class Wna16Args : public ::testing::TestWithParam<Wna16ArgCase> {};

TEST_P(Wna16Args, OneRuleOneMessage) {
  Wna16MoeArgs args = valid_args();
  GetParam().change(args);
  const std::string error = error_of(args);
  EXPECT_NE(error.find(GetParam().message), std::string::npos) << "got: " << error;
}

INSTANTIATE_TEST_SUITE_P(Rules, Wna16Args, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Wna16ArgCase>& param_info) { return std::string(param_info.param.name); });

// The unchanged call passes every argument rule and reaches the device check, which refuses the
// fake pointer (no driver here, or a pointer CUDA does not know): the cases above each differ
// from a call the rules accept.
TEST(Wna16ArgsBaseline, ValidCallReachesTheDeviceCheck) {
  const std::string error = error_of(valid_args());
  EXPECT_NE(error.find("wna16_moe: a is not a pointer CUDA knows"), std::string::npos) << "got: " << error;
}

}  // namespace
}  // namespace moeval::kernels
