// One unit of work of `moeval check`: a GEMM case on one registered kernel, a whole-layer case on
// one weight format, one golden family regenerated on the CPU, or a GEMM case on one kernel on
// every device (cross-device agreement). Jobs are what the named matrices
// produce, what --filter selects, what --shard partitions and what a report holds one record of.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "moeval/fixtures/problem.h"
#include "moeval/golden/corpus.h"
#include "moeval/kernels/moe_forward.h"

namespace moeval::cli {

// cross_device: one GEMM case on one kernel on every device of the run, outputs compared bitwise
// (SKIPPED with fewer than two devices).
enum class JobKind { golden, gemm, layer, cross_device };

struct Job {
  JobKind kind = JobKind::gemm;
  // Registry name of the GEMM kernel ("wna16_moe", "marlin_moe"), "moe_forward[wna16]" /
  // "moe_forward[marlin]" for a layer, "golden" for a golden family.
  std::string kernel;
  // Which part of the matrix the job comes from ("small", "experts-512", "deepseek-v3", ...):
  // the `shape` key of --filter.
  std::string shape;
  MoeProblem problem;                                          // gemm and layer jobs
  kernels::MoeWeightFormat format = kernels::MoeWeightFormat::wna16;  // layer jobs
  golden::Family family = golden::Family::wna16;               // golden jobs
  // Position in the selected list (after --filter, before --shard): the order of every report,
  // so that merged shards read like one run.
  std::size_t index = 0;
  // Jobs that share one case (a GEMM case on each kernel, listed next to each other, on one device
  // or on every device) share a group:
  // one worker runs them one after the other, building the case once, and one shard owns them.
  std::size_t group = 0;

  // Unique within a matrix: "<kernel> <case name>" ("golden wna16.h5" for a golden family, and
  // "<kernel> <case name> on every device" for a cross-device job).
  std::string id() const;
  // The case name alone (problem.name(), or "<family>.h5").
  std::string case_name() const;
  // "gemm1", "gemm2", "layer", "golden" or "cross_device".
  std::string kind_name() const;
  // "exact", "bounded" or "golden".
  std::string tier_name() const;
  // What judges it: "cpu-fp64", "gpu-cublas" (reference_choice.h) or "golden file".
  std::string reference_name() const;
  // The case's parameters for reports: E, M, topk, H, I, weight type, group, act-order, is_k_full,
  // dtype, routing, tier, seed, local experts (EP) and K shard; {"family": ...} for a golden job.
  nlohmann::json params() const;
};

// Sets index = position and group (a new group wherever the case changes, and for every job that
// is not a GEMM case).
void number_jobs(std::vector<Job>& jobs);

}  // namespace moeval::cli
