#include "run_header.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <ctime>

#include "build_info.h"
#include "run_report.h"

namespace moeval::cli {
namespace {

// 12040 → "12.4"
std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json make_header(const RunDescription& run) {
  nlohmann::json devices = nlohmann::json::array();
  for (int d : run.devices) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
      cudaGetLastError();
      devices.push_back({{"index", d}, {"name", nullptr}});
      continue;
    }
    char bus[32] = {};
    cudaDeviceGetPCIBusId(bus, sizeof bus, d);
    devices.push_back({{"index", d},
                       {"name", prop.name},
                       {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
                       {"memory_bytes", prop.totalGlobalMem},
                       {"pci_bus_id", bus}});
  }
  int driver = 0, runtime = 0;
  const bool have_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0;
  cudaRuntimeGetVersion(&runtime);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  nlohmann::json filters = nlohmann::json::array();
  for (const auto& f : run.filters) filters.push_back(f);
  return {{"schema_version", kReportSchemaVersion},
          {"moeval", {{"version", version_number()}, {"commit", git_commit()}}},
          {"run",
           {{"command", run.command},
            {"start_time", utc_now()},
            {"host", host},
            {"devices", devices},
            {"driver_version", have_driver ? nlohmann::json(cuda_version(driver)) : nlohmann::json(nullptr)},
            {"cuda_runtime_version", cuda_version(runtime > 0 ? runtime : CUDART_VERSION)},
            {"matrix", run.matrix},
            {"filters", filters},
            {"seeds", run.seeds},
            {"shard", {{"index", run.shard.index}, {"count", run.shard.count}, {"source", run.shard.source}}},
            {"jobs_selected", run.jobs_selected},
            {"jobs_in_shard", run.jobs_in_shard},
            {"contract", "default"}}}};
}

}  // namespace moeval::cli
