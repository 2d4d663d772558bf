#include "device_selection.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

#include "moeval/testbed/devices.h"

namespace moeval::cli {

std::vector<int> validated_devices(const std::vector<int>& requested) {
  const auto& visible = testbed::visible_devices();
  std::vector<int> devices = requested;
  if (devices.empty()) {
    for (int d = 0; d < visible.count; ++d) devices.push_back(d);
  }
  for (int d : devices) {
    if (d < 0 || d >= visible.count) {
      throw std::invalid_argument("--device " + std::to_string(d) + " does not exist; " +
                                  (visible.count == 0 ? "no CUDA device is visible (" + visible.reason + ")"
                                                      : "visible devices: 0.." + std::to_string(visible.count - 1)));
    }
  }
  return devices;
}

void write_json_file(const std::string& path, const nlohmann::json& report) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp);
    out << report.dump(2) << '\n';
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      throw std::runtime_error("cannot write the JSON report " + path);
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::remove(temp.c_str());
    throw std::runtime_error("cannot write the JSON report " + path + ": " + ec.message());
  }
}

}  // namespace moeval::cli
