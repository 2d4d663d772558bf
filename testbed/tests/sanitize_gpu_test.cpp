// compute-sanitizer over every registered kernel (the `sanitize` label), over a small matrix with
// exact-size buffers (no guard zones, so one element past any buffer leaves its allocation):
//   memcheck   out-of-bounds and misaligned accesses, including READS, which guard canaries cannot see;
//   racecheck  shared-memory hazards (split-K partial sums, missing barriers);
//   initcheck  reads of device memory nothing wrote (a workspace or padding the kernel assumes
//              zeroed; the testbed fills every buffer it hands over, so any report is the kernel's);
//   synccheck  barriers in divergent code and invalid warp-synchronous masks.
//
// Each ctest entry (kernel × tool) re-runs this binary under compute-sanitizer with
// MOEVAL_SANITIZE_CHILD=1 and its own gtest filter; the child runs the matrix through the testbed
// (which also compares with the reference). The entry passes only if the child passed AND the
// tool reports zero errors / hazards. Without compute-sanitizer on a GPU machine the entry fails
// (set MOEVAL_COMPUTE_SANITIZER to its path): a sanitizer run that did not happen is not a pass.
// A positive control (`SanitizeFence`) shows that memcheck does see a read one element past a
// fenced buffer, the kind of read that changes no output and that no other check can see.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "gpu_case_support.h"
#include "moeval/testbed/devices.h"
#include "registered_kernels.h"

namespace moeval::testbed {
namespace test {
void read_element(const std::uint16_t* p, long long index, std::uint16_t* to);  // sanitize_fence_kernel.cu
}  // namespace test
namespace {

using SanitizeParam = std::tuple<std::string, std::string>;  // kernel, tool

std::vector<MoeProblem> sanitize_problems() {
  std::vector<MoeProblem> v;
  // Zero points, group 32, decode-sized (8-row blocks), many empty experts.
  v.push_back(gemm_problem(ProblemKind::gemm1, WeightType::uint4, 32, DType::bf16, Tier::exact, 64, 3, 4));
  // 8-bit channelwise fp16 GEMM2 with routing weights, an expert map with remote experts.
  MoeProblem ep = gemm_problem(ProblemKind::gemm2, WeightType::uint8b128, kChannelwise, DType::f16, Tier::bounded, 16, 33, 4);
  for (std::int32_t e = 0; e < 16; ++e) ep.expert_map.push_back(e % 2 == 0 ? e / 2 : -1);
  v.push_back(ep);
  // Decode with a long K: few items, so K is split across the warps of a block and the partial
  // sums meet in shared memory (what racecheck must see).
  v.push_back(gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 128, DType::bf16, Tier::exact, 4, 2, 2, 1024, 64));
  // Single token, top-1, one expert: the smallest grid.
  v.push_back(gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 128, DType::bf16, Tier::exact, 1, 1, 1));
  // Prefill-sized (64-row blocks, split tiles) with more routed rows than moe_align's single-block path takes.
  v.push_back(gemm_problem(ProblemKind::gemm2, WeightType::uint4b8, 64, DType::bf16, Tier::exact, 32, 2100, 4, 256, 64));
  // ~75 rows per expert and K = 640 (10 chunks of 4 K tiles): Marlin's producer form (64-row items
  // on sm_90a) with items longer than its ring, so the ring wraps inside an item, where a consumer
  // asks the next chunk's barrier ahead of time with the other phase parity.
  v.push_back(gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 128, DType::bf16, Tier::exact, 8, 300, 2, 640, 128));
  // ~20 rows per expert: 32-row blocks (Marlin's one-warpgroup wgmma items on sm_90a), zero points,
  // GEMM2 with routing weights.
  v.push_back(gemm_problem(ProblemKind::gemm2, WeightType::uint4, 32, DType::bf16, Tier::exact, 4, 40, 2));
  // ~20 rows per expert over 128 experts, N = 1024: ~512–540 32-row items; on an H200 (132 SMs, 3
  // thread blocks each) Marlin's wgmma path splits the last round's ~116–144 items in 2 K pieces
  // (K = 256) that meet in the workspace (the kernel test's LastRound ..._naturalround case asserts
  // that this shape splits, and is Skipped on GPUs whose SM count leaves no such round).
  v.push_back(gemm_problem(ProblemKind::gemm1, WeightType::uint4, 64, DType::bf16, Tier::exact, 128, 320, 8, 256, 512));
  // Decode over many experts (~223 8-row blocks × 16 tile columns): on an H200 (132 SMs) Marlin's
  // slice kernel with two tile columns per warp, a whole round of column pairs and a last round
  // split in 2 K slices that meet in the workspace (K = 512: 4 rounds of 8 K tiles).
  v.push_back(gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 128, DType::bf16, Tier::exact, 256, 64, 8, 512, 512));
  // Act-order, for the kernels whose layout carries g_idx.
  MoeProblem act = gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 64, DType::f16, Tier::bounded, 8, 9, 2);
  act.scheme.act_order = true;
  v.push_back(act);
  return v;
}

std::string find_sanitizer() {
  if (const char* env = std::getenv("MOEVAL_COMPUTE_SANITIZER"); env && *env) return env;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      const auto candidate = std::filesystem::path(dir) / "compute-sanitizer";
      if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  const std::string cuda = "/usr/local/cuda/bin/compute-sanitizer";
  return ::access(cuda.c_str(), X_OK) == 0 ? cuda : std::string();
}

// Runs the current test again under compute-sanitizer's `tool`, in a child with
// MOEVAL_SANITIZE_CHILD=1; returns its exit status and its whole output (the command first), which
// the checks search; messages print its end (last_of).
std::pair<int, std::string> run_child_under(const std::string& tool) {
  const std::string sanitizer = find_sanitizer();
  if (sanitizer.empty()) {
    ADD_FAILURE() << "compute-sanitizer not found (PATH, /usr/local/cuda/bin, MOEVAL_COMPUTE_SANITIZER)";
    return {-1, ""};
  }
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter = std::string(info->test_suite_name()) + "." + info->name();
  const auto log = std::filesystem::temp_directory_path() /
                   ("moeval-sanitize-" + std::to_string(::getpid()) + "-" + tool + ".log");
  const std::string command = "MOEVAL_SANITIZE_CHILD=1 '" + sanitizer + "' --tool " + tool +
                              " --error-exitcode 86 --print-limit 20 '" + std::filesystem::read_symlink("/proc/self/exe").string() +
                              "' --gtest_filter='" + filter + "' > '" + log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(log);
  return {status, command + "\nexit status " + std::to_string(status) + "\n" + output};
}

// A child's output for a failure message: its first two lines (the command, the exit status) and
// its last 12000 characters, where the sanitizer's summary is.
std::string last_of(const std::string& output) {
  constexpr std::size_t kChars = 12000;
  if (output.size() <= kChars) return output;
  return output.substr(0, output.find('\n', output.find('\n') + 1) + 1) + "[...]\n" + output.substr(output.size() - kChars);
}

class Sanitize : public testing::TestWithParam<SanitizeParam> {};

TEST_P(Sanitize, Clean) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto& [kernel_name, tool] = GetParam();
  if (std::getenv("MOEVAL_SANITIZE_CHILD") != nullptr) {
    GuardedBuffer::set_exact_size(true);
    const GemmKernelUnderTest& kernel = registered_kernel(kernel_name);
    for (const GemmCase& c : supported_cases(kernel, sanitize_problems())) {
      const CaseResult r = run_gemm_case(kernel, c, 0);
      EXPECT_TRUE(r.pass()) << r.summary();
    }
    return;
  }
  const auto [status, output] = run_child_under(tool);
  // racecheck prints its own summary; memcheck, initcheck and synccheck print "ERROR SUMMARY".
  const char* clean = tool == "racecheck" ? "RACECHECK SUMMARY: 0 hazards displayed" : "ERROR SUMMARY: 0 errors";
  const bool child_ran = output.find("[  PASSED  ] 1 test") != std::string::npos;
  EXPECT_TRUE(status == 0 && child_ran && output.find(clean) != std::string::npos) << last_of(output);
}

// The positive control: in the child, a fenced (exact-size) buffer of 100 bf16 elements and a read
// of element 100, one past the end, whose value goes nowhere that matters: without the sanitizer
// the read lands in the fence, allocated memory, and nothing fails. memcheck must report it; and
// element 99 alone is clean, so the fence does not report the buffer's own last element either.
TEST(SanitizeFence, ReadOnePastAFencedBufferIsReported) {
  MOEVAL_REQUIRE_GPUS(1);
  if (std::getenv("MOEVAL_SANITIZE_CHILD") != nullptr) {
    GuardedBuffer::set_exact_size(true);
    GuardedBuffer a("a", 0, 100 * 2, 2);
    GuardedBuffer seen("seen", 0, 2 * 2, 2);
    test::read_element(a.as<std::uint16_t>(), 99, seen.as<std::uint16_t>());
    if (std::getenv("MOEVAL_SANITIZE_FENCE_PAST") != nullptr) {
      test::read_element(a.as<std::uint16_t>(), 100, seen.as<std::uint16_t>() + 1);
    }
    GuardedBuffer::set_exact_size(false);
    return;
  }
  ::setenv("MOEVAL_SANITIZE_FENCE_PAST", "1", 1);
  const auto [past_status, past] = run_child_under("memcheck");
  ::unsetenv("MOEVAL_SANITIZE_FENCE_PAST");
  EXPECT_NE(past_status, 0) << last_of(past);
  EXPECT_NE(past.find("Invalid __global__ read"), std::string::npos) << last_of(past);
  const auto [last_status, last] = run_child_under("memcheck");
  EXPECT_TRUE(last_status == 0 && last.find("ERROR SUMMARY: 0 errors") != std::string::npos) << last_of(last);
}

INSTANTIATE_TEST_SUITE_P(Registry, Sanitize,
                         testing::Combine(testing::ValuesIn(registered_kernel_names()),
                                          testing::Values("memcheck", "racecheck", "initcheck", "synccheck")),
                         [](const testing::TestParamInfo<SanitizeParam>& i) {
                           return kernel_param_name({std::get<0>(i.param), i.index}) + "_" + std::get<1>(i.param);
                         });

}  // namespace
}  // namespace moeval::testbed
