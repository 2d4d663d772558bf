#include <cstdio>

#include "commands.h"
#include "moeval/testbed/devices.h"

namespace moeval::cli {

Runner add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Run the default check matrix: GPU kernels where a device exists, "
                                          "the CPU tier and golden checks otherwise");
  return [cmd] {
    (void)cmd;
    const auto& devices = testbed::visible_devices();
    std::printf("moeval check\n");
    std::printf("  devices: %d%s%s\n", devices.count, devices.reason.empty() ? "" : " — ", devices.reason.c_str());
    std::printf("  NOT YET IMPLEMENTED: no check matrix exists yet (fixtures, references, goldens and kernels "
                "land in their own issues); nothing was checked.\n");
    return 1;
  };
}

}  // namespace moeval::cli
