// The worker pool, on the CPU: golden jobs need no device, so two "device" workers run them
// concurrently (HDF5 calls take turns), each job exactly once; a stop request ends the run before
// the next group.
#include <gtest/gtest.h>

#include <set>

#include "job_filter.h"
#include "job_runner.h"
#include "matrices.h"

namespace moeval::cli {
namespace {

std::vector<Job> golden_jobs() {
  MatrixOptions o;
  o.name = MatrixName::quick;
  return select_jobs(build_jobs(o), {JobFilter("kind=golden")});
}

TEST(RunJobs, TwoWorkersRunEveryJobOnce) {
  const auto jobs = golden_jobs();
  ASSERT_EQ(jobs.size(), 4u);
  std::multiset<std::size_t> seen;
  std::atomic<bool> stop{false};
  run_jobs(jobs, {0, 1}, {}, [&](const nlohmann::json& rec) {
    seen.insert(rec["index"].get<std::size_t>());
    EXPECT_EQ(rec["status"], "PASS") << rec.dump();
    EXPECT_TRUE(rec["device"].is_null()) << "a golden job runs on no device";
  }, stop);
  EXPECT_EQ(seen, (std::multiset<std::size_t>{0, 1, 2, 3}));
}

TEST(RunJobs, AStopRequestEndsTheRunAfterTheJobsInFlight) {
  const auto jobs = golden_jobs();
  std::size_t records = 0;
  std::atomic<bool> stop{false};
  run_jobs(jobs, {}, {}, [&](const nlohmann::json&) {
    ++records;
    stop = true;
  }, stop);
  EXPECT_EQ(records, 1u);
}

TEST(RunJobs, GpuJobsWithoutADeviceAreSkippedWithTheReason) {
  MatrixOptions o;
  o.name = MatrixName::quick;
  o.kernels = {"wna16_moe"};
  const auto jobs = select_jobs(build_jobs(o), {JobFilter("kind=gemm1")});
  JobRunOptions options;
  options.gpu_skip_reason = "no CUDA device: test";
  const nlohmann::json rec = run_job(jobs.front(), -1, options);
  EXPECT_EQ(rec["status"], "SKIPPED");
  EXPECT_EQ(rec["reason"], "no CUDA device: test");
}

TEST(RunJobs, CrossDeviceJobsNeedTwoDevices) {
  MatrixOptions o;
  o.name = MatrixName::quick;
  o.kernels = {"wna16_moe"};
  const auto jobs = select_jobs(build_jobs(o), {JobFilter("kind=cross_device")});
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs.front().id(), "wna16_moe " + jobs.front().problem.name() + " on every device");
  JobRunOptions options;
  options.devices = {0};
  const nlohmann::json rec = run_job(jobs.front(), 0, options);
  EXPECT_EQ(rec["status"], "SKIPPED");
  EXPECT_EQ(rec["reason"], "needs two devices; this run has 1");
  EXPECT_TRUE(rec["device"].is_null());
}

}  // namespace
}  // namespace moeval::cli
