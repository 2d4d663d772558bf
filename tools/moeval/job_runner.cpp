#include "job_runner.h"

#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "failure_pattern.h"
#include "gpu_reference.h"
#include "k_group_attribution.h"
#include "golden_check.h"
#include "reference_choice.h"
#include "repro.h"
#include "moeval/fixtures/cases.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/case_runner.h"
#include "moeval/testbed/kernel_under_test.h"
#include "moeval/testbed/layer_runner.h"

namespace moeval::cli {
namespace {

// Debian's HDF5 is built without its thread-safety option: the golden families and the reproduce
// files of concurrent workers take turns.
std::mutex hdf5_mutex;

nlohmann::json finite_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

nlohmann::json optional_bool(const std::optional<bool>& b) { return b ? nlohmann::json(*b) : nlohmann::json(nullptr); }

nlohmann::json base_record(const Job& job, int device) {
  return {{"index", job.index},
          {"id", job.id()},
          {"kernel", job.kernel},
          {"kind", job.kind_name()},
          {"shape", job.shape},
          {"case", job.case_name()},
          {"params", job.params()},
          {"device", device >= 0 ? nlohmann::json(device) : nlohmann::json(nullptr)},
          {"tier", job.tier_name()},
          {"reference", job.reference_name()},
          // The numerics contract the kernel is judged by (the bound of docs/tolerance.md); a
          // verdict replaces it with the contract its reference and bound modelled.
          {"contract", "default"},
          {"status", "SKIPPED"},
          {"reason", ""},
          {"max_ratio", nullptr},
          {"worst", nullptr},
          {"mismatches", nullptr},
          {"elements", nullptr},
          {"mismatch_fraction", nullptr},
          {"normwise", nullptr},
          {"deterministic", nullptr},
          {"canaries_intact", nullptr},
          {"pattern", nullptr},
          {"repro", nullptr},
          {"time_s", 0.0}};
}

void add_verdict(nlohmann::json& rec, const tolerance::Verdict& v, const std::string& stage = "") {
  rec["contract"] = v.contract.name();
  rec["max_ratio"] = finite_or_null(v.max_ratio);
  if (v.worst) {
    const auto& w = *v.worst;
    rec["worst"] = {{"row", w.row}, {"col", w.col}, {"value", finite_or_null(w.value)}, {"reference", finite_or_null(w.reference)},
                    {"bound", finite_or_null(w.bound)}, {"ratio", finite_or_null(w.ratio)}};
    if (!stage.empty()) rec["worst"]["stage"] = stage;
  }
  rec["mismatches"] = v.violations;
  rec["elements"] = v.rows * v.cols;
  rec["mismatch_fraction"] = v.rows * v.cols > 0 ? double(v.violations) / double(v.rows * v.cols) : 0.0;
  rec["normwise"] = finite_or_null(v.normwise);
  rec["deterministic"] = optional_bool(v.deterministic);
  rec["canaries_intact"] = optional_bool(v.canaries_intact);
}

// The case and the reference that judges it (reference_choice.h); the GPU reference runs on `device`.
std::shared_ptr<const GemmInputs> inputs_of(const Job& job, const JobRunOptions& options, int device) {
  const ReferenceKind reference = choose_reference(job.problem);
  if (options.cache) return options.cache->get(job.problem, reference, device);
  auto own = std::make_shared<GemmInputs>();
  own->gemm_case = build_gemm_case(job.problem);
  own->reference = reference == ReferenceKind::gpu_cublas ? gpu_reference_gemm(own->gemm_case, device)
                                                          : reference::reference_gemm(own->gemm_case);
  return own;
}

// Why `kernel` cannot be judged by the GPU reference ("" when it can): the cuBLAS path models the
// default numerics contract only (gpu_reference.h).
std::string gpu_reference_mismatch(const Job& job, const testbed::GemmKernelUnderTest& kernel) {
  if (choose_reference(job.problem) != ReferenceKind::gpu_cublas || kernel.contract() == reference::NumericsContract{}) {
    return "";
  }
  return "the gpu-cublas reference of this size models the default numerics contract only; " + kernel.name() +
         " declares '" + kernel.contract().name() + "'";
}

void run_gemm(const Job& job, int device, const JobRunOptions& options, nlohmann::json& rec) {
  const auto kernel = testbed::KernelRegistry::instance().find(job.kernel);
  if (!kernel) {
    rec["status"] = "FAIL";
    rec["reason"] = "no registered kernel is named '" + job.kernel + "'";
    return;
  }
  if (auto why = gpu_reference_mismatch(job, *kernel); !why.empty()) {
    rec["reason"] = why;
    return;
  }
  const std::shared_ptr<const GemmInputs> inputs = inputs_of(job, options, device);
  const GemmCase& c = inputs->gemm_case;
  const reference::ReferenceOutput& reference = inputs->reference;
  if (auto why = kernel->unsupported_reason(c); !why.empty()) {
    rec["reason"] = "unsupported: " + why;
    return;
  }
  const auto r = testbed::run_gemm_case(*kernel, c, device, &reference);
  add_verdict(rec, r.verdict);
  if (r.pass()) {
    rec["status"] = "PASS";
    return;
  }
  rec["status"] = "FAIL";
  std::vector<std::int32_t> row_expert;
  if (std::size_t(reference.rows) == c.routing.topk_ids.size()) row_expert = c.routing.topk_ids;
  const FailurePattern pattern = failure_pattern(r.output, reference, job.problem.tier, row_expert, job.problem.experts);
  rec["pattern"] = pattern.json;
  std::string reason = r.summary() + "\n  pattern: " + pattern.summary;
  try {
    const KGroupAttribution groups = k_group_attribution(c, r.output, reference, job.problem.tier);
    rec["pattern"]["k_groups"] = groups.json;
    reason += "\n  K-groups: " + groups.summary;
  } catch (const std::exception& e) {
    reason += "\n  K-groups not attributed: " + std::string(e.what());
  }
  if (choose_reference(job.problem) == ReferenceKind::gpu_cublas) {
    // A real-size case holds gigabytes of weights: the matrix rebuilds it from its seed instead.
    rec["reason"] = reason + "\n  no reproduce file for a case of this size; rerun it: moeval check --matrix <its matrix> --filter 'id=" +
                    job.id() + "'";
    return;
  }
  try {
    const std::lock_guard<std::mutex> lock(hdf5_mutex);
    const auto repro = write_gemm_repro(options.repro_dir, c, reference);
    rec["repro"] = repro.string();
    reason += "\n  reproduce: moeval check --repro " + repro.string();
  } catch (const std::exception& e) {
    reason += "\n  reproduce file not written: " + std::string(e.what());
  }
  rec["reason"] = reason;
}

// The case on every device of the run: each against the reference, each output bitwise equal to
// the first device's (a kernel whose result depends on the device it runs on is named even when
// each device passes its own check).
void run_cross_device(const Job& job, const JobRunOptions& options, nlohmann::json& rec) {
  if (options.devices.empty() || options.devices.size() < options.cross_device_min_devices) {
    rec["reason"] = "needs two devices; this run has " + std::to_string(options.devices.size());
    return;
  }
  const auto kernel = testbed::KernelRegistry::instance().find(job.kernel);
  if (!kernel) throw std::runtime_error("no registered kernel is named '" + job.kernel + "'");
  if (auto why = gpu_reference_mismatch(job, *kernel); !why.empty()) {
    rec["reason"] = why;
    return;
  }
  const auto inputs = inputs_of(job, options, options.devices.front());
  if (auto why = kernel->unsupported_reason(inputs->gemm_case); !why.empty()) {
    rec["reason"] = "unsupported: " + why;
    return;
  }
  std::string reason;
  std::vector<std::uint16_t> first;
  for (int d : options.devices) {
    const auto r = testbed::run_gemm_case(*kernel, inputs->gemm_case, d, &inputs->reference);
    if (!r.pass()) reason += (reason.empty() ? "" : "\n") + r.summary();
    if (d == options.devices.front()) {
      first = r.output;
      add_verdict(rec, r.verdict);
    } else if (r.output != first) {
      std::size_t differ = 0;
      for (std::size_t i = 0; i < first.size() && i < r.output.size(); ++i) differ += first[i] != r.output[i];
      reason += (reason.empty() ? "" : "\n") + std::string("device ") + std::to_string(d) + " differs bitwise from device " +
                std::to_string(options.devices.front()) + " in " + std::to_string(differ) + " of " +
                std::to_string(first.size()) + " outputs";
    }
  }
  rec["status"] = reason.empty() ? "PASS" : "FAIL";
  if (reason.empty() && options.devices.size() == 1) reason = "one device: no cross-device agreement to check";
  rec["reason"] = reason;
  rec["devices"] = options.devices;
}

void run_layer(const Job& job, int device, nlohmann::json& rec) {
  const auto r = testbed::run_layer_case(build_layer_case(job.problem), device, nullptr, job.format);
  // The layer's figures: the worst stage's ratio and element, mismatches summed over the stages.
  const tolerance::Verdict* worst = nullptr;
  std::string worst_stage;
  std::int64_t mismatches = 0, elements = 0;
  bool deterministic = r.forward_deterministic, canaries = r.memory_errors.empty();
  static const char* const kStages[] = {"gemm1", "silu_and_mul", "gemm2", "combine"};
  for (std::size_t s = 0; s < r.stages.size(); ++s) {
    const tolerance::Verdict& v = r.stages[s].verdict;
    mismatches += v.violations;
    elements += v.rows * v.cols;
    deterministic = deterministic && v.deterministic.value_or(true);
    canaries = canaries && r.stages[s].memory_errors.empty();
    if (!worst || !(v.max_ratio <= worst->max_ratio)) {
      worst = &v;
      worst_stage = s < 4 ? kStages[s] : "stage " + std::to_string(s);
    }
  }
  if (worst) add_verdict(rec, *worst, worst_stage);
  rec["mismatches"] = mismatches;
  rec["elements"] = elements;
  rec["mismatch_fraction"] = elements > 0 ? double(mismatches) / double(elements) : 0.0;
  rec["deterministic"] = deterministic;
  rec["canaries_intact"] = canaries;
  rec["status"] = r.pass() ? "PASS" : "FAIL";
  if (!r.pass()) rec["reason"] = r.summary();
}

void run_golden(const Job& job, const JobRunOptions& options, nlohmann::json& rec) {
  const std::lock_guard<std::mutex> lock(hdf5_mutex);
  const CheckLine line = check_golden_family(options.golden_dir, job.family);
  rec["status"] = line.status;
  rec["reason"] = line.detail;
}

}  // namespace

nlohmann::json skipped_record(const Job& job, const std::string& reason) {
  nlohmann::json rec = base_record(job, -1);
  rec["reason"] = reason;
  return rec;
}

nlohmann::json run_job(const Job& job, int device, const JobRunOptions& options) {
  if (job.kind != JobKind::golden && device < 0) return skipped_record(job, options.gpu_skip_reason);
  const bool on_one_device = job.kind == JobKind::gemm || job.kind == JobKind::layer;
  nlohmann::json rec = base_record(job, on_one_device ? device : -1);
  const auto start = std::chrono::steady_clock::now();
  try {
    switch (job.kind) {
      case JobKind::golden: run_golden(job, options, rec); break;
      case JobKind::gemm: run_gemm(job, device, options, rec); break;
      case JobKind::layer: run_layer(job, device, rec); break;
      case JobKind::cross_device: run_cross_device(job, options, rec); break;
    }
  } catch (const std::exception& e) {
    rec["status"] = "FAIL";
    rec["reason"] = std::string("error: ") + e.what();
  }
  rec["time_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rec;
}

void run_jobs(const std::vector<Job>& jobs, const std::vector<int>& devices, const JobRunOptions& options,
              const std::function<void(const nlohmann::json&)>& on_record, const std::atomic<bool>& stop) {
  testbed::register_builtin_kernels();  // before the workers: the registry is not for concurrent writers
  // Each worker may hold one case while the others build the next ones.
  CaseCache cache(devices.size() + 2);
  JobRunOptions shared = options;
  if (!shared.cache) shared.cache = &cache;
  // The queue hands out groups (a case on every kernel): a worker builds the case once and runs
  // it on each kernel, while the other workers build other cases.
  std::vector<std::size_t> starts;  // first job of each group
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (i == 0 || jobs[i].group != jobs[i - 1].group) starts.push_back(i);
  }
  starts.push_back(jobs.size());
  std::atomic<std::size_t> next{0};
  std::mutex report_mutex;
  const auto worker = [&](int device) {
    for (std::size_t g = next++; g + 1 < starts.size() && !stop.load(); g = next++) {
      for (std::size_t i = starts[g]; i < starts[g + 1] && !stop.load(); ++i) {
        const nlohmann::json rec = run_job(jobs[i], device, shared);
        const std::lock_guard<std::mutex> lock(report_mutex);
        on_record(rec);
      }
    }
  };
  if (devices.size() <= 1) {
    worker(devices.empty() ? -1 : devices.front());
    return;
  }
  std::vector<std::thread> threads;
  for (int d : devices) threads.emplace_back(worker, d);
  for (auto& t : threads) t.join();
}

}  // namespace moeval::cli
