// Splitting one selection of jobs over processes that never talk to each other: --shard i/n, or
// the rank and size the launcher put in the environment. The jobs of group g (one case on every
// kernel) belong to shard g mod n, so every job runs exactly once across the n shards, a case is
// built by one shard only, and each shard gets a mix of cheap and costly cases (the matrices list
// similar cases next to each other).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check_job.h"

namespace moeval::cli {

struct Shard {
  int index = 0;  // 0 .. count - 1
  int count = 1;
  std::string source = "none";  // "--shard", "SLURM_PROCID/SLURM_NTASKS", ...

  bool owns(const Job& job) const { return int(job.group % std::size_t(count)) == index; }
  std::string label() const;  // "2/4": INDEX/COUNT, as --shard takes it
};

// "i/n" with 0 <= i < n, 1 <= n <= 100000. Throws UsageError naming --shard and what is allowed.
Shard parse_shard(const std::string& text);

// Looks up a variable of the environment (std::getenv in production; a map in tests).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_environment();

// The shard of this process: --shard when given (`option` non-empty), otherwise the innermost
// launcher whose variables are set: Open MPI (OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE), then
// PMI (PMI_RANK / PMI_SIZE, MPICH and Intel MPI), then Slurm (SLURM_PROCID / SLURM_NTASKS: an
// sbatch script's SLURM_PROCID=0 reaches every rank of an mpirun inside it); 0/1 when none is. A
// rank without its size (or the reverse), a value that is not a number, or a rank outside
// [0, size) is a UsageError naming the variables.
Shard resolve_shard(const std::string& option, const EnvLookup& env);

// The jobs of `shard` (their `index` is kept: it is their place in the whole selection).
std::vector<Job> shard_jobs(const std::vector<Job>& jobs, const Shard& shard);

}  // namespace moeval::cli
