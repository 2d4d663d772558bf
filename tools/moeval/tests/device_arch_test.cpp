// The compute-capability check against CMAKE_CUDA_ARCHITECTURES, on the CPU: which devices can run
// code built for which lists (SASS: same major, minor >= built; PTX: any newer capability; "a":
// exactly one capability).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "device_arch.h"

namespace moeval::cli {
namespace {

struct ArchCase {
  const char* architectures;
  int major, minor;
  bool runs;
};

class DeviceArch : public ::testing::TestWithParam<ArchCase> {};

TEST_P(DeviceArch, AgreesWithCudaCompatibilityRules) {
  const ArchCase& c = GetParam();
  const std::string why = arch_mismatch(c.major, c.minor, c.architectures);
  EXPECT_EQ(why.empty(), c.runs) << c.architectures << " on " << c.major << "." << c.minor << ": " << why;
  if (!c.runs) {
    EXPECT_NE(why.find("compute capability " + std::to_string(c.major) + "." + std::to_string(c.minor)),
              std::string::npos)
        << why;
    EXPECT_NE(why.find(c.architectures), std::string::npos) << "names the built list: " << why;
  }
}

std::string name(const ::testing::TestParamInfo<ArchCase>& info) {
  std::string arch = info.param.architectures;
  for (char& ch : arch) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return "built_" + arch + "_on_sm" + std::to_string(info.param.major) + std::to_string(info.param.minor);
}

INSTANTIATE_TEST_SUITE_P(Lists, DeviceArch,
                         ::testing::Values(ArchCase{"90", 9, 0, true},      // the default build on an H100/H200
                                           ArchCase{"90", 8, 0, false},     // A100: too old
                                           ArchCase{"90", 8, 9, false},     // L40: too old
                                           ArchCase{"90", 10, 0, true},     // B200: compute_90 PTX is JIT-compiled
                                           ArchCase{"90-real", 10, 0, false},  // SASS only: no PTX to JIT
                                           ArchCase{"90-real", 9, 0, true},
                                           ArchCase{"80-real", 8, 6, true},    // sm_80 SASS runs on 8.6
                                           ArchCase{"86-real", 8, 0, false},   // but not the other way
                                           ArchCase{"80;90", 8, 0, true},
                                           ArchCase{"80;90", 8, 9, true},
                                           ArchCase{"80;90", 7, 5, false},
                                           ArchCase{"90a", 9, 0, true},       // arch-specific: exactly 9.0
                                           ArchCase{"90a", 10, 0, false},
                                           ArchCase{"90a-real", 9, 0, true},
                                           ArchCase{"86-virtual", 8, 9, true},  // PTX only, JIT upward
                                           ArchCase{"86-virtual", 8, 0, false},
                                           ArchCase{"native", 7, 0, true},   // cannot be judged: trusted
                                           ArchCase{"all", 5, 0, true}),
                         name);

}  // namespace
}  // namespace moeval::cli
