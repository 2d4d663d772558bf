// --filter: which jobs of a matrix run. A small grammar, e.g. `kernel=marlin_moe,dtype=bf16`:
//
//   filter := term (',' term)*          every term must hold (AND)
//   term   := key ('=' | '!=') values   '=': the job's value is one of them; '!=': none of them
//   values := value ('|' value)*        alternatives (OR); a value may hold the globs * ? [...]
//
// Keys: kernel (wna16_moe, marlin_moe, moe_forward[wna16], moe_forward[marlin], golden), kind
// (gemm1, gemm2, layer, golden, cross_device; a cross-device job is also its case's gemm1/gemm2), scheme (a weight type, uint4b8 uint4 uint8b128 uint8, or a glob
// over the scheme's name, e.g. *actorder*), dtype (fp16, bf16), group (-1 or channelwise, 32, 64,
// 128), shape (the matrix's shape label: small, decode, experts-512, deepseek-v3, ...), tier
// (exact, bounded, golden), reference (cpu-fp64, gpu-cublas, golden file: reference_choice.h), E, M (numbers), id (a glob over "<kernel> <case name>").
// A golden job has no scheme, dtype, group, E or M: a term on those keys does not select it.
#pragma once

#include <string>
#include <vector>

#include "check_job.h"

namespace moeval::cli {

class JobFilter {
 public:
  JobFilter() = default;  // selects everything
  // Throws UsageError naming the term and what is allowed (unknown key, missing '=', empty
  // value, a dtype/tier/kind/group value that does not exist, a number that is not one).
  explicit JobFilter(const std::string& text);

  bool matches(const Job& job) const;
  bool empty() const { return terms_.empty(); }

 private:
  struct Term {
    std::string key;
    bool negated = false;
    std::vector<std::string> values;
  };
  std::vector<Term> terms_;
};

// The jobs every filter selects (several --filter options: all must hold), index and group renumbered.
std::vector<Job> select_jobs(std::vector<Job> jobs, const std::vector<JobFilter>& filters);

}  // namespace moeval::cli
