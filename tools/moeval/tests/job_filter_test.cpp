// --filter: the grammar of docs/reports.md, on the jobs of the quick matrix, and one clear error
// per malformed filter.
#include <gtest/gtest.h>

#include <algorithm>

#include "exit_codes.h"
#include "job_filter.h"
#include "matrices.h"

namespace moeval::cli {
namespace {

std::vector<Job> standard_jobs() {
  MatrixOptions o;
  o.kernels = {"wna16_moe", "marlin_moe"};
  return build_jobs(o);
}

std::vector<Job> pick(const std::string& filter) { return select_jobs(standard_jobs(), {JobFilter(filter)}); }

TEST(JobFilter, EmptyListSelectsEverything) {
  EXPECT_EQ(select_jobs(standard_jobs(), {}).size(), standard_jobs().size());
}

TEST(JobFilter, TermsAreAndedAlternativesOred) {
  const auto jobs = pick("kernel=marlin_moe,dtype=bf16|fp16,group=32");
  ASSERT_FALSE(jobs.empty());
  for (const Job& j : jobs) {
    EXPECT_EQ(j.kernel, "marlin_moe");
    EXPECT_EQ(j.problem.scheme.group_size, 32);
  }
  const auto bf16 = pick("kernel=marlin_moe,dtype=bf16,group=32");
  EXPECT_LT(bf16.size(), jobs.size());
  for (const Job& j : bf16) EXPECT_EQ(j.problem.scheme.act, DType::bf16);
}

TEST(JobFilter, IndexIsRenumberedInSelectionOrder) {
  const auto jobs = pick("kind=gemm2");
  for (std::size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(jobs[i].index, i);
}

TEST(JobFilter, NegationGlobsAndNumbers) {
  for (const Job& j : pick("kernel!=golden|moe_forward*")) {
    EXPECT_TRUE(j.kind == JobKind::gemm || j.kind == JobKind::cross_device) << j.id();
  }
  for (const Job& j : pick("scheme=*actorder*")) EXPECT_TRUE(j.problem.scheme.act_order) << j.id();
  for (const Job& j : pick("scheme=uint8")) EXPECT_EQ(j.problem.scheme.type, WeightType::uint8) << j.id();
  const auto e512 = pick("E=512");
  ASSERT_FALSE(e512.empty());
  for (const Job& j : e512) EXPECT_EQ(j.problem.experts, 512);
  EXPECT_EQ(pick("group=channelwise").size(), pick("group=-1").size());
  EXPECT_EQ(pick("tier=golden").size(), 4u);
  EXPECT_EQ(pick("id=golden wna16.h5").size(), 1u);
}

TEST(JobFilter, KeysAGoldenJobLacksDoNotSelectIt) {
  for (const Job& j : pick("dtype!=fp16")) EXPECT_NE(j.kind, JobKind::golden);
}

struct BadFilter {
  const char* name;
  const char* text;
  const char* message;
};

class JobFilterErrors : public ::testing::TestWithParam<BadFilter> {};

TEST_P(JobFilterErrors, NameTheTermAndWhatIsAllowed) {
  try {
    JobFilter f(GetParam().text);
    FAIL() << "accepted " << GetParam().text;
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, JobFilterErrors,
    ::testing::Values(
        BadFilter{"NoEquals", "kernel", "--filter 'kernel': term 'kernel' is not key=value or key!=value; keys: kernel, kind, scheme, dtype, group, shape, tier, reference, E, M, id"},
        BadFilter{"UnknownKey", "colour=red", "--filter 'colour=red': term 'colour=red' has the unknown key 'colour'; keys: kernel, kind, scheme, dtype, group, shape, tier, reference, E, M, id"},
        BadFilter{"UnknownDtype", "dtype=fp8", "--filter 'dtype=fp8': term 'dtype=fp8' has the unknown dtype 'fp8'; allowed: fp16, bf16"},
        BadFilter{"UnknownGroup", "group=48", "--filter 'group=48': term 'group=48' has the unknown group '48'; allowed: -1, channelwise, 32, 64, 128"},
        BadFilter{"NotANumber", "E=many", "--filter 'E=many': term 'E=many' has E 'many', which is not a non-negative integer"},
        BadFilter{"EmptyAlternative", "kind=gemm1|", "--filter 'kind=gemm1|': term 'kind=gemm1|' has an empty value; write key=a|b"},
        BadFilter{"EmptyTerm", "kind=gemm1,,tier=exact", "--filter 'kind=gemm1,,tier=exact': term '' is not key=value or key!=value; keys: kernel, kind, scheme, dtype, group, shape, tier, reference, E, M, id"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace moeval::cli
