// Fuzz input bytes as a file on disk (the readers take paths): one file per process, rewritten for
// every input, on /dev/shm when it exists so the disk is not worn.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace moeval::fuzz {

inline const std::filesystem::path& input_path() {
  static const std::filesystem::path path = [] {
    const std::filesystem::path dir = std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    return dir / ("moeval-fuzz-" + std::to_string(::getpid()) + ".h5");
  }();
  return path;
}

inline const std::filesystem::path& write_input(const std::uint8_t* data, std::size_t size) {
  const auto& path = input_path();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();  // the harness itself is broken: say so loudly
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace moeval::fuzz
