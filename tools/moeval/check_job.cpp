#include "check_job.h"

#include "reference_choice.h"

namespace moeval::cli {

std::string Job::case_name() const {
  return kind == JobKind::golden ? std::string(golden::to_string(family)) + ".h5" : problem.name();
}

std::string Job::id() const {
  return kernel + " " + case_name() + (kind == JobKind::cross_device ? " on every device" : "");
}

std::string Job::kind_name() const {
  if (kind == JobKind::cross_device) return "cross_device";
  return kind == JobKind::golden ? "golden" : std::string(to_string(problem.kind));
}

std::string Job::tier_name() const { return kind == JobKind::golden ? "golden" : std::string(to_string(problem.tier)); }

std::string Job::reference_name() const {
  return kind == JobKind::golden ? "golden file" : std::string(to_string(choose_reference(problem)));
}

nlohmann::json Job::params() const {
  if (kind == JobKind::golden) return {{"family", std::string(golden::to_string(family))}};
  const MoeProblem& p = problem;
  nlohmann::json j = {
      {"E", p.experts},
      {"M", p.tokens},
      {"topk", p.topk},
      {"H", p.hidden},
      {"I", p.inter},
      {"weight_type", std::string(to_string(p.scheme.type))},
      {"group", p.scheme.group_size},
      {"act_order", p.scheme.act_order},
      {"is_k_full", p.scheme.is_k_full},
      {"dtype", std::string(to_string(p.scheme.act))},
      {"routing", std::string(to_string(p.routing.kind))},
      {"tier", std::string(to_string(p.tier))},
      {"seed", p.seed},
      {"local_experts", p.expert_map.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.local_experts())},
      {"k_shards", p.k_shards},
      {"k_shard_rank", p.k_shard_rank},
  };
  if (kind == JobKind::layer) j["format"] = format == kernels::MoeWeightFormat::marlin ? "marlin" : "wna16";
  return j;
}

void number_jobs(std::vector<Job>& jobs) {
  std::size_t group = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].index = i;
    // A GEMM case on each kernel (on one device, or on every device) shares the case.
    const bool gemm_like = jobs[i].kind == JobKind::gemm || jobs[i].kind == JobKind::cross_device;
    const bool same_case = i > 0 && gemm_like && jobs[i].kind == jobs[i - 1].kind &&
                           jobs[i].case_name() == jobs[i - 1].case_name();
    if (i > 0 && !same_case) ++group;
    jobs[i].group = group;
  }
}

}  // namespace moeval::cli
