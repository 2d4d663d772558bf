// --shard and the launchers' environment: every job of a selection runs in exactly one shard, and
// the rank and size come from the innermost launcher that set them (MPI's over Slurm's).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "exit_codes.h"
#include "job_filter.h"
#include "matrices.h"
#include "shard.h"

namespace moeval::cli {
namespace {

std::vector<Job> selection(MatrixName name, const std::string& filter) {
  MatrixOptions o;
  o.name = name;
  o.kernels = {"wna16_moe", "marlin_moe"};
  std::vector<JobFilter> filters;
  if (!filter.empty()) filters.emplace_back(filter);
  return select_jobs(build_jobs(o), filters);
}

class EveryJobOnce : public ::testing::TestWithParam<int> {};

TEST_P(EveryJobOnce, AcrossTheShardsOfTheStandardMatrix) {
  const int n = GetParam();
  for (const std::string& filter : {std::string(), std::string("kernel=marlin_moe"), std::string("kind=layer|golden")}) {
    const auto jobs = selection(MatrixName::standard, filter);
    std::map<std::string, int> runs;
    std::size_t total = 0;
    const std::size_t groups_total = jobs.empty() ? 0 : jobs.back().group + 1;
    for (int i = 0; i < n; ++i) {
      const auto mine = shard_jobs(jobs, Shard{i, n, "test"});
      total += mine.size();
      // Shards differ by at most one group (a case on every kernel), and own whole groups.
      std::set<std::size_t> groups;
      for (const Job& j : mine) groups.insert(j.group);
      EXPECT_LE(groups.size(), groups_total / std::size_t(n) + 1);
      EXPECT_GE(groups.size(), groups_total / std::size_t(n));
      for (const Job& j : mine) ++runs[j.id()];
      for (const Job& j : jobs) {
        if (groups.count(j.group)) {
          EXPECT_EQ(j.group % std::size_t(n), std::size_t(i)) << j.id();
        }
      }
    }
    EXPECT_EQ(total, jobs.size()) << filter;
    EXPECT_EQ(runs.size(), jobs.size()) << filter;
    for (const auto& [id, count] : runs) EXPECT_EQ(count, 1) << id;
  }
}

TEST(Groups, AGemmCaseOnEveryKernelIsOneGroup) {
  const auto jobs = selection(MatrixName::quick, "");
  for (std::size_t i = 1; i < jobs.size(); ++i) {
    const bool gemm_like = jobs[i].kind == JobKind::gemm || jobs[i].kind == JobKind::cross_device;
    const bool same = gemm_like && jobs[i].kind == jobs[i - 1].kind && jobs[i].case_name() == jobs[i - 1].case_name();
    EXPECT_EQ(jobs[i].group, jobs[i - 1].group + (same ? 0 : 1)) << jobs[i].id();
  }
  EXPECT_EQ(jobs.back().group, 17u) << "4 golden families, 8 GEMM cases, 4 cross-device cases, 2 layers";
}

INSTANTIATE_TEST_SUITE_P(Counts, EveryJobOnce, ::testing::Values(1, 2, 3, 7, 16, 1000),
                         [](const auto& param_info) { return "Shards" + std::to_string(param_info.param); });

EnvLookup env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(ResolveShard, OptionWinsOverTheEnvironment) {
  const Shard s = resolve_shard("1/3", env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}));
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 3);
  EXPECT_EQ(s.source, "--shard");
}

TEST(ResolveShard, OpenMpiThenPmiThenSlurm) {
  const Shard ompi = resolve_shard("", env({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "3"}}));
  EXPECT_EQ(ompi.label(), "1/2");
  EXPECT_EQ(ompi.source, "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE");
  const Shard pmi = resolve_shard("", env({{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}}));
  EXPECT_EQ(pmi.label(), "2/3");
  EXPECT_EQ(pmi.source, "PMI_RANK/PMI_SIZE");
  const Shard slurm = resolve_shard("", env({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}}));
  EXPECT_EQ(slurm.label(), "3/4");
  EXPECT_EQ(slurm.source, "SLURM_PROCID/SLURM_NTASKS");
  const Shard none = resolve_shard("", env({}));
  EXPECT_EQ(none.label(), "0/1");
}

// `mpirun -np 16 moeval check` inside an sbatch script: every rank inherits the batch step's
// SLURM_PROCID=0 and SLURM_NTASKS, and gets its own rank from the MPI launcher, the inner one.
TEST(ResolveShard, MpiInsideASlurmAllocationTakesMpisRank) {
  const Shard ompi = resolve_shard("", env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "16"}, {"OMPI_COMM_WORLD_RANK", "5"},
                                            {"OMPI_COMM_WORLD_SIZE", "16"}}));
  EXPECT_EQ(ompi.label(), "5/16");
  EXPECT_EQ(ompi.source, "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE");
  const Shard mpich = resolve_shard("", env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"PMI_RANK", "7"}, {"PMI_SIZE", "8"}}));
  EXPECT_EQ(mpich.label(), "7/8");
}

struct BadShard {
  const char* name;
  const char* option;
  std::map<std::string, std::string> vars;
  const char* message;
};

class ShardErrors : public ::testing::TestWithParam<BadShard> {};

TEST_P(ShardErrors, SayWhatIsAllowed) {
  try {
    resolve_shard(GetParam().option, env(GetParam().vars));
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, ShardErrors,
    ::testing::Values(
        BadShard{"NoSlash", "3", {}, "--shard: '3' is not INDEX/COUNT (e.g. 0/4: the first of four shards)"},
        BadShard{"IndexPastCount", "4/4", {}, "--shard: '4/4': INDEX must be 0..3 (shards count from 0)"},
        BadShard{"ZeroCount", "0/0", {}, "--shard: '0/0': COUNT must be 1..100000"},
        BadShard{"Negative", "-1/2", {}, "--shard: '-1/2': INDEX must be 0..1 (shards count from 0)"},
        // Past long long's range: still the field's range, not "is not INDEX/COUNT".
        BadShard{"HugeCount", "0/9223372036854775808", {}, "--shard: '0/9223372036854775808': COUNT must be 1..100000"},
        BadShard{"HugeIndex", "99999999999999999999/4", {},
                 "--shard: '99999999999999999999/4': INDEX must be 0..3 (shards count from 0)"},
        BadShard{"RankWithoutSize", "", {{"SLURM_PROCID", "1"}},
                 "SLURM_PROCID is set but SLURM_NTASKS is not; set both, or pass --shard INDEX/COUNT"},
        BadShard{"RankPastSize", "", {{"PMI_RANK", "2"}, {"PMI_SIZE", "2"}},
                 "PMI_RANK/PMI_SIZE = 2/2 is not a rank in [0, size) with size 1..100000; pass --shard INDEX/COUNT to override"},
        BadShard{"NotANumber", "", {{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "2"}},
                 "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE = x/2 is not a rank in [0, size) with size 1..100000; pass --shard INDEX/COUNT to override"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace moeval::cli
