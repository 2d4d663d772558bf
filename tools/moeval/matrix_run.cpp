#include "matrix_run.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "device_selection.h"
#include "exit_codes.h"
#include "golden_check.h"
#include "job_filter.h"
#include "job_runner.h"
#include "matrices.h"
#include "path_identity.h"
#include "plural.h"
#include "progress.h"
#include "report_dir.h"
#include "report_file.h"
#include "repro.h"
#include "run_header.h"
#include "shard.h"
#include "stop_signal.h"
#include "validators.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/kernel_under_test.h"

namespace moeval::cli {
namespace {


// --json and the summary line: one row per printed line, and the counts of jobs, rewritten as
// results arrive. A row may stand for several jobs (the collapsed "gpu tier (N jobs)" line) or
// for none (a device that cannot run this build): the counts are of jobs, as in report.json and
// junit.xml.
struct JsonTally {
  long passed = 0, failed = 0, skipped = 0;
  nlohmann::json rows = nlohmann::json::array();

  nlohmann::json json() const {
    return {{"passed", passed}, {"failed", failed}, {"skipped", skipped}, {"checks", rows}};
  }
  void add(const std::string& what, const std::string& status, const std::string& detail, long jobs = 1) {
    (status == "PASS" ? passed : status == "FAIL" ? failed : skipped) += jobs;
    rows.push_back({{"check", what}, {"status", status}, {"detail", detail}, {"jobs", jobs}});
  }
};

// The matrix, filtered, of this shard. Every argument is checked here, before any work.
struct Selection {
  std::vector<Job> selected;  // the whole selection (all shards)
  std::vector<Job> mine;      // this shard's part
  Shard shard;
};

Selection select(const MatrixRunOptions& options) {
  const MatrixName matrix = parse_matrix_name(options.matrix);
  std::vector<JobFilter> filters;
  for (const std::string& f : options.filters) filters.emplace_back(f);
  Selection s;
  s.shard = resolve_shard(options.shard, process_environment());
  testbed::register_builtin_kernels();
  MatrixOptions m;
  m.name = matrix;
  m.seeds = options.seeds;
  m.golden = !options.sweep;
  m.every_device = options.sweep;
  for (const auto& k : testbed::KernelRegistry::instance().all()) m.kernels.push_back(k->name());
  const std::vector<Job> all = build_jobs(m);
  s.selected = select_jobs(all, filters);
  if (s.selected.empty()) {
    std::string text;
    for (const auto& f : options.filters) text += (text.empty() ? "" : " ") + std::string("--filter '") + f + "'";
    throw UsageError(text + " selects none of the " + count_of(long(all.size()), "job") + " of the " + options.matrix +
                     " matrix; `moeval " + options.command + " --matrix " + options.matrix + " --list` prints them");
  }
  s.mine = shard_jobs(s.selected, s.shard);
  // A --golden-dir given is checked even for --list (bad input is refused whatever else is asked).
  if (!options.golden_dir.empty()) require_golden_corpus(options.golden_dir, {});
  return s;
}

// The files of the report directory (--out) a --json path must not be: the run writes them itself
// into `out_dir` (its shard's directory); and, for a shard, a report beside the shard directories
// in `shared_dir` would make `report merge` see two runs there.
// The paths are resolved (path_identity.h) as they are spelt: --out need not exist yet.
void refuse_json_in_report_dir(const std::string& json_path, const std::filesystem::path& out_dir,
                               const std::filesystem::path& shared_dir) {
  if (json_path.empty()) return;
  for (const std::filesystem::path& dir : {out_dir, shared_dir}) {
    for (const char* name : kReportDirFiles) {
      if (same_path(json_path, dir / name)) {
        throw UsageError("--json '" + json_path + "' is the report directory's own " + name + " (--out writes " +
                         (dir == out_dir ? "it into '" + out_dir.string() + "'" : "the shards' reports beside it") +
                         "); give --json another path");
      }
    }
  }
}

int list_jobs(const MatrixRunOptions& options, const Selection& s) {
  for (const Job& j : s.mine) {
    std::printf("%5zu  %-8s %-11s %-15s %s\n", j.index, j.tier_name().c_str(), j.reference_name().c_str(), j.shape.c_str(),
                j.id().c_str());
  }
  std::printf("%s of the %s matrix", count_of(long(s.mine.size()), "job").c_str(), options.matrix.c_str());
  if (s.shard.count > 1) std::printf(" in shard %s (of %zu selected)", s.shard.label().c_str(), s.selected.size());
  std::printf("; nothing was run\n");
  return kPass;
}

}  // namespace

int run_matrix(const MatrixRunOptions& options, const std::string& command) {
  const Selection s = select(options);
  if (options.list) return list_jobs(options, s);
  // Every input is checked before anything is written: the golden files this shard reads, then
  // the report paths.
  std::vector<golden::Family> families;
  for (const Job& j : s.mine) {
    if (j.kind == JobKind::golden) families.push_back(j.family);
  }
  if (!families.empty()) require_golden_corpus(options.golden_dir, families);
  std::filesystem::path out_dir;
  if (!options.out_dir.empty()) {
    out_dir = options.out_dir;
    if (s.shard.count > 1) out_dir /= "shard-" + std::to_string(s.shard.index) + "-of-" + std::to_string(s.shard.count);
    refuse_json_in_report_dir(options.json_path, out_dir, options.out_dir);
    ReportDir::check_writable(out_dir);  // before the device check: a bad --out is exit 2 everywhere
    // `--out D --json D/summary.json`: --json's directory is one this run creates, and must exist
    // for --json to be checked. Only then is it created this early (nothing in it touched);
    // otherwise the report creates it once the run starts, so that a run that ends before (a
    // sweep without a GPU, exit 3) leaves nothing behind.
    const std::filesystem::path json_dir = std::filesystem::path(options.json_path).parent_path();
    if (!options.json_path.empty() && is_within(out_dir, json_dir) && is_within(json_dir, options.out_dir)) {
      ReportDir::create(out_dir);
    }
  }
  // A --repro-dir that cannot be written would lose the first failing case's file, after the run
  // that found it; the default ("moeval-repro" in the working directory) is only made when a case
  // fails, so a run from a read-only directory that fails nothing still runs.
  if (options.repro_dir_given) ReportDir::check_writable(options.repro_dir, "--repro-dir");
  ReportFile json_report(options.json_path);  // an unwritable report path fails now, not after the run
  const DevicePlan plan = options.cpu_only ? DevicePlan{} : plan_devices(options.devices);
  if (options.sweep) {
    // A sweep is about the devices: without one it has nothing to do (exit 3, docs/errors.md).
    if (!plan.no_device.empty()) throw NothingRan("no CUDA device (" + plan.no_device + "); nothing was swept");
    if (plan.devices.empty()) throw NothingRan("no requested device can run this build; nothing was swept");
  }
  const std::string name = "moeval " + options.command;

  RunDescription desc;
  desc.command = command;
  desc.matrix = options.matrix;
  desc.filters = options.filters;
  desc.seeds = options.seeds;
  desc.shard = s.shard;
  desc.jobs_selected = s.selected.size();
  desc.jobs_in_shard = s.mine.size();
  desc.devices = plan.devices;
  std::unique_ptr<ReportDir> out;
  if (!out_dir.empty()) out = std::make_unique<ReportDir>(out_dir, make_header(desc));

  const auto& visible = testbed::visible_devices();
  if (visible.count > 0) {
    std::printf("%s: %s visible\n", name.c_str(), count_of(visible.count, "CUDA device").c_str());
  } else {
    std::printf("%s: no CUDA device: %s\n", name.c_str(), describe_no_device(visible.reason).c_str());
  }
  std::printf("%s: %s matrix, %s%s%s\n", name.c_str(), options.matrix.c_str(), count_of(long(s.mine.size()), "job").c_str(),
              s.shard.count > 1 ? (" (shard " + s.shard.label() + " from " + s.shard.source + ")").c_str() : "",
              plan.devices.size() > 1 ? (", one worker on each of " + count_of(long(plan.devices.size()), "device")).c_str() : "");
  // Each kernel is judged under the numerics contract it declares (docs/external-kernels.md).
  for (const auto& k : testbed::KernelRegistry::instance().all()) {
    std::printf("%s: contract of %s: %s\n", name.c_str(), k->name().c_str(), k->contract().name().c_str());
  }
  JsonTally tally;
  json_report.progress(tally.json());

  // Without a usable device the GPU jobs are recorded SKIPPED in the reports, and summed up in one
  // line here.
  std::string gpu_missing;  // why (part of) the GPU tier did not run
  if (options.cpu_only) {
    gpu_missing = "--cpu-only";
  } else if (!plan.no_device.empty()) {
    gpu_missing = "no CUDA device: " + plan.no_device;
  } else {
    for (const std::string& why : plan.unusable) gpu_missing = why;
  }
  std::vector<Job> to_run;
  long gpu_skipped = 0;
  for (const Job& j : s.mine) {
    if (j.kind == JobKind::golden || !plan.devices.empty()) {
      to_run.push_back(j);
      continue;
    }
    ++gpu_skipped;
    if (out) out->add(skipped_record(j, gpu_missing));
  }
  for (const std::string& why : plan.unusable) {
    // A device, not a job: its jobs run on the other devices (or are counted just below).
    std::printf("%-8s %s  %s\n", "SKIPPED", "gpu tier", why.c_str());
    tally.add("gpu tier", "SKIPPED", why, 0);
  }
  if (gpu_skipped > 0) {
    const std::string what = "gpu tier (" + count_of(gpu_skipped, "job") + ")";
    std::printf("%-8s %s  %s\n", "SKIPPED", what.c_str(), gpu_missing.c_str());
    tally.add(what, "SKIPPED", gpu_missing, gpu_skipped);
    json_report.progress(tally.json());
  }

  JobRunOptions run_options;
  run_options.repro_dir = options.repro_dir;
  run_options.golden_dir = options.golden_dir;
  run_options.gpu_skip_reason = gpu_missing;
  run_options.devices = plan.devices;
  run_options.cross_device_min_devices = options.sweep ? 1 : 2;
  Progress progress(to_run.size(), ::isatty(2) == 1);
  StopOnSignal stop;
  const auto start = std::chrono::steady_clock::now();
  std::size_t done = 0;
  run_jobs(to_run, plan.devices, run_options,
           [&](const nlohmann::json& rec) {
             ++done;
             // Into the files first, then on the screen: a run killed after printing a line has
             // that check in results.jsonl and in --json.
             tally.add(where_ran(rec) + " " + rec.value("id", ""), rec.value("status", ""), rec.value("reason", ""));
             if (out) out->add(rec);
             json_report.progress(tally.json());
             progress.record(rec);
           },
           stop.requested());
  progress.finish();
  const bool interrupted = stop.requested().load();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (interrupted) {
    std::printf("%s: interrupted after %zu of %zu jobs\n", options.command.c_str(), done, to_run.size());
  }
  std::printf("%s: %ld passed, %ld failed, %ld skipped (%.1f s)\n", options.command.c_str(), tally.passed, tally.failed,
              tally.skipped, seconds);
  nlohmann::json summary = tally.json();
  if (interrupted) {  // "complete" says the end was written, not that every job ran
    summary["interrupted"] = true;
    summary["not_run"] = to_run.size() - done;
  }
  json_report.finish(summary);
  if (out) {
    out->finish({{"end_time", utc_now()}, {"duration_s", seconds}, {"interrupted", interrupted}});
    std::printf("%s: report in %s (report.json, results.jsonl, results.csv, junit.xml)\n", options.command.c_str(), out->dir().c_str());
  }
  if (interrupted) stop.end_by_signal();
  if (tally.failed > 0) return kCheckFailed;
  if (options.sweep && !gpu_missing.empty()) {
    // Part of the fleet could not run this build.
    std::fprintf(stderr, "%s: not every device could run: %s\n", name.c_str(), gpu_missing.c_str());
    return kNothingRan;
  }
  if (options.require_gpu && !gpu_missing.empty()) {
    std::fprintf(stderr, "moeval check: --require-gpu: the GPU tier did not run: %s\n",
                 gpu_missing.rfind("no CUDA device: ", 0) == 0 ? gpu_missing.substr(16).c_str() : gpu_missing.c_str());
    return kNothingRan;
  }
  return kPass;
}

}  // namespace moeval::cli

namespace moeval::cli {

MatrixOptionHandles add_matrix_options(CLI::App& cmd, MatrixRunOptions& options) {
  MatrixOptionHandles h;
  h.device = add_integer_list(cmd, "--device", options.devices, 0, 1023,
                              options.sweep
                                  ? "Devices to sweep, e.g. 0,1 (default: every visible device); each case runs on all"
                                  : "Devices to use, e.g. 0,1 (default: every visible device); each job runs on one");
  h.matrix = cmd.add_option("--matrix", options.matrix,
                            "quick (seconds), standard (default) or full; default and smoke are the kernel suites' GEMM matrices");
  h.filter = cmd.add_option("--filter", options.filters,
                            "Select jobs, e.g. kernel=marlin_moe,dtype=bf16 (keys: kernel kind scheme dtype group shape tier "
                            "reference E M id; '|' between alternatives, '!=' to exclude, globs allowed; repeat to AND)");
  h.seeds = cmd.add_option("--seeds", options.seeds,
                           "Seeds per matrix cell, 1 to 1000 (default " + std::to_string(options.seeds) + ")")
                ->check(integer_in(1, 1000));
  h.shard = cmd.add_option("--shard", options.shard,
                           "Run shard INDEX/COUNT of the selection (default: from the innermost launcher: "
                           "OMPI_COMM_WORLD_RANK/SIZE, else PMI_RANK/PMI_SIZE, else SLURM_PROCID/SLURM_NTASKS; else everything)")
                ->check(not_empty("INDEX/COUNT, e.g. 0/4"));
  h.list = cmd.add_flag("--list", options.list, "Print the selected jobs and run nothing (no GPU needed)");
  h.out = cmd.add_option("--out", options.out_dir,
                         "Write the report into this directory: results.jsonl as the run goes, then report.json, "
                         "results.csv, junit.xml (a shard writes DIR/shard-I-of-N)")
              ->check(not_empty("a directory"));
  h.json = cmd.add_option("--json", options.json_path,
                          "Also write the results as JSON to this file (rewritten as results arrive)")
               ->check(not_empty("a file"));
  h.repro_dir = cmd.add_option("--repro-dir", options.repro_dir, "Where failing cases are written (default: moeval-repro)")
                    ->check(not_empty("a directory"))
                    ->each([&options](const std::string&) { options.repro_dir_given = true; });
  return h;
}

}  // namespace moeval::cli
