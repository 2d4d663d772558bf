#include "job_filter.h"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "exit_codes.h"

namespace moeval::cli {
namespace {

const std::map<std::string, std::vector<std::string>>& closed_keys() {
  // Keys whose values form a closed set: a value outside it is a typo, said so at once.
  static const std::map<std::string, std::vector<std::string>> keys{
      {"kind", {"gemm1", "gemm2", "layer", "golden", "cross_device"}},
      {"dtype", {"fp16", "bf16"}},
      {"tier", {"exact", "bounded", "golden"}},
      {"group", {"-1", "channelwise", "32", "64", "128"}},
      {"reference", {"cpu-fp64", "gpu-cublas", "golden file"}},
  };
  return keys;
}

const std::vector<std::string> kOpenKeys = {"kernel", "scheme", "shape", "E", "M", "id"};

std::string allowed_keys() {
  std::string s;
  for (const auto& k : {"kernel", "kind", "scheme", "dtype", "group", "shape", "tier", "reference", "E", "M", "id"}) {
    s += (s.empty() ? "" : ", ") + std::string(k);
  }
  return s;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

bool is_glob(const std::string& v) { return v.find_first_of("*?[") != std::string::npos; }

// The job's values for a key (several for `scheme` and `group`); nullopt when the job has none.
std::optional<std::vector<std::string>> values_of(const Job& job, const std::string& key) {
  if (key == "kernel") return std::vector<std::string>{job.kernel};
  if (key == "kind") {
    // A cross-device job is also its case's GEMM: kind=gemm1 selects the gemm1 cases of a sweep.
    if (job.kind == JobKind::cross_device) return std::vector<std::string>{job.kind_name(), std::string(to_string(job.problem.kind))};
    return std::vector<std::string>{job.kind_name()};
  }
  if (key == "shape") return std::vector<std::string>{job.shape};
  if (key == "tier") return std::vector<std::string>{job.tier_name()};
  if (key == "id") return std::vector<std::string>{job.id()};
  if (key == "reference") return std::vector<std::string>{job.reference_name()};
  if (job.kind == JobKind::golden) return std::nullopt;
  const MoeProblem& p = job.problem;
  if (key == "scheme") return std::vector<std::string>{std::string(to_string(p.scheme.type)), p.scheme.name()};
  if (key == "dtype") return std::vector<std::string>{std::string(to_string(p.scheme.act))};
  if (key == "group") {
    if (p.scheme.group_size == kChannelwise) return std::vector<std::string>{"-1", "channelwise"};
    return std::vector<std::string>{std::to_string(p.scheme.group_size)};
  }
  if (key == "E") return std::vector<std::string>{std::to_string(p.experts)};
  if (key == "M") return std::vector<std::string>{std::to_string(p.tokens)};
  return std::nullopt;
}

}  // namespace

JobFilter::JobFilter(const std::string& text) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string term_text = text.substr(start, end - start);
    start = end + 1;
    auto fail = [&](const std::string& why) {
      return UsageError("--filter '" + text + "': term '" + term_text + "' " + why);
    };
    const std::size_t eq = term_text.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw fail("is not key=value or key!=value; keys: " + allowed_keys());
    }
    Term term;
    term.negated = term_text[eq - 1] == '!';
    term.key = term_text.substr(0, term.negated ? eq - 1 : eq);
    const auto closed = closed_keys().find(term.key);
    if (closed == closed_keys().end() && std::find(kOpenKeys.begin(), kOpenKeys.end(), term.key) == kOpenKeys.end()) {
      throw fail("has the unknown key '" + term.key + "'; keys: " + allowed_keys());
    }
    const std::string values = term_text.substr(eq + 1);
    std::size_t v0 = 0;
    while (v0 <= values.size()) {
      const std::size_t v1 = std::min(values.find('|', v0), values.size());
      std::string v = values.substr(v0, v1 - v0);
      v0 = v1 + 1;
      if (v.empty()) throw fail("has an empty value; write key=a|b");
      if (closed != closed_keys().end() && !is_glob(v) &&
          std::find(closed->second.begin(), closed->second.end(), v) == closed->second.end()) {
        throw fail("has the unknown " + term.key + " '" + v + "'; allowed: " + join(closed->second));
      }
      if ((term.key == "E" || term.key == "M") && !is_glob(v)) {
        long long n = 0;
        const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec != std::errc() || ptr != v.data() + v.size() || n < 0) {
          throw fail("has " + term.key + " '" + v + "', which is not a non-negative integer");
        }
      }
      term.values.push_back(std::move(v));
    }
    terms_.push_back(std::move(term));
  }
}

bool JobFilter::matches(const Job& job) const {
  for (const Term& t : terms_) {
    const auto have = values_of(job, t.key);
    if (!have) return false;  // the job has no such property: neither '=' nor '!=' selects it
    bool any = false;
    for (const std::string& pattern : t.values) {
      for (const std::string& value : *have) any = any || ::fnmatch(pattern.c_str(), value.c_str(), 0) == 0;
    }
    if (any == t.negated) return false;
  }
  return true;
}

std::vector<Job> select_jobs(std::vector<Job> jobs, const std::vector<JobFilter>& filters) {
  std::vector<Job> out;
  for (Job& j : jobs) {
    if (std::all_of(filters.begin(), filters.end(), [&](const JobFilter& f) { return f.matches(j); })) {
      out.push_back(std::move(j));
    }
  }
  number_jobs(out);
  return out;
}

}  // namespace moeval::cli
