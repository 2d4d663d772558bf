#include "shard.h"

#include <charconv>
#include <cstdlib>
#include <limits>

#include "exit_codes.h"

namespace moeval::cli {
namespace {

// An integer, or nullopt for text that is not one. Digits past long long's range read as its
// limit of that sign, so that the range checks below name the field ("COUNT must be 1..100000")
// instead of calling 0/9223372036854775808 "not INDEX/COUNT".
std::optional<long long> integer(const std::string& text) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (end != text.data() + text.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    return text.starts_with('-') ? std::numeric_limits<long long>::min() : std::numeric_limits<long long>::max();
  }
  if (ec != std::errc()) return std::nullopt;
  return v;
}

constexpr long long kMaxShards = 100000;

}  // namespace

std::string Shard::label() const { return std::to_string(index) + "/" + std::to_string(count); }

Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  const auto i = slash == std::string::npos ? std::nullopt : integer(text.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : integer(text.substr(slash + 1));
  if (!i || !n) throw UsageError("--shard: '" + text + "' is not INDEX/COUNT (e.g. 0/4: the first of four shards)");
  if (*n < 1 || *n > kMaxShards) {
    throw UsageError("--shard: '" + text + "': COUNT must be 1.." + std::to_string(kMaxShards));
  }
  if (*i < 0 || *i >= *n) {
    throw UsageError("--shard: '" + text + "': INDEX must be 0.." + std::to_string(*n - 1) + " (shards count from 0)");
  }
  return Shard{int(*i), int(*n), "--shard"};
}

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
}

Shard resolve_shard(const std::string& option, const EnvLookup& env) {
  if (!option.empty()) return parse_shard(option);
  struct Launcher {
    const char* rank;
    const char* size;
  };
  // The innermost launcher first: an sbatch script's environment holds SLURM_PROCID=0 for every
  // process it starts, so `mpirun -np 16 moeval check` inside it must take MPI's rank, not Slurm's.
  // Open MPI and MPICH/Intel MPI (PMI) are started by mpirun/mpiexec inside a Slurm allocation,
  // never the reverse; srun sets only Slurm's variables (or, with --mpi=pmi2, equal PMI ones).
  for (const Launcher l : {Launcher{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, Launcher{"PMI_RANK", "PMI_SIZE"},
                           Launcher{"SLURM_PROCID", "SLURM_NTASKS"}}) {
    const auto rank = env(l.rank);
    const auto size = env(l.size);
    if (!rank && !size) continue;
    const std::string names = std::string(l.rank) + "/" + l.size;
    if (!rank || !size) {
      throw UsageError(std::string(rank ? l.rank : l.size) + " is set but " + (rank ? l.size : l.rank) +
                       " is not; set both, or pass --shard INDEX/COUNT");
    }
    const auto r = integer(*rank);
    const auto n = integer(*size);
    if (!r || !n || *n < 1 || *n > kMaxShards || *r < 0 || *r >= *n) {
      throw UsageError(names + " = " + *rank + "/" + *size + " is not a rank in [0, size) with size 1.." +
                       std::to_string(kMaxShards) + "; pass --shard INDEX/COUNT to override");
    }
    return Shard{int(*r), int(*n), names};
  }
  return Shard{};
}

std::vector<Job> shard_jobs(const std::vector<Job>& jobs, const Shard& shard) {
  std::vector<Job> out;
  for (const Job& j : jobs) {
    if (shard.owns(j)) out.push_back(j);
  }
  return out;
}

}  // namespace moeval::cli
