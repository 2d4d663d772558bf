// Running the jobs of `moeval check`: one job into one report record, and one worker thread per
// device pulling jobs from a shared queue (each device has its own worker, so its own current
// device, default stream and buffers; the CPU reference of a job runs on its worker's thread).
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "case_cache.h"
#include "check_job.h"

namespace moeval::cli {

struct JobRunOptions {
  std::string repro_dir = "moeval-repro";  // where failing GEMM cases are written
  std::string golden_dir;                  // empty: the source tree's golden/data
  std::string gpu_skip_reason;             // why GPU jobs cannot run here ("" when devices exist)
  CaseCache* cache = nullptr;              // GEMM cases shared between jobs (run_jobs makes one)
  std::vector<int> devices;                // every device of the run (cross-device jobs use them all)
  // A cross-device job with fewer devices is SKIPPED: 2 for check (one device is its GEMM jobs'
  // business), 1 for sweep (every case is a cross-device job; on one device, just its check).
  std::size_t cross_device_min_devices = 2;
};

// The record of one job (docs/reports.md): the job's identity and parameters, the device, status
// PASS / FAIL / SKIPPED with the reason, the verdict's figures (max ratio, worst element,
// mismatches and their fraction, normwise error, determinism, canaries), the failure pattern and
// reproduce file of a failing GEMM, and the time it took. `device` -1: no device (a GPU job is
// then SKIPPED with options.gpu_skip_reason). Never throws: an error is a FAIL record.
nlohmann::json run_job(const Job& job, int device, const JobRunOptions& options);

// The record of a job that was not run on purpose (e.g. --cpu-only): SKIPPED with `reason`.
nlohmann::json skipped_record(const Job& job, const std::string& reason);

// Runs `jobs` on one worker per device (one CPU worker when `devices` is empty), each worker
// taking the next group of jobs (Job::group) until none is left or `stop` is set; `on_record` is
// called from the workers, one call at a time, with each record.
void run_jobs(const std::vector<Job>& jobs, const std::vector<int>& devices, const JobRunOptions& options,
              const std::function<void(const nlohmann::json&)>& on_record, const std::atomic<bool>& stop);

}  // namespace moeval::cli
