// Helpers shared by the golden tests: a scratch directory and a small record of every element type.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "moeval/golden/record.h"

namespace moeval::golden::testing {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() / ("moeval-golden-" + tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// A record that exercises every element type, a 16-bit float tag, nested groups, an empty dataset
// and every attribute type. `salt` changes the values so two records differ everywhere.
inline CaseRecord sample_record(const std::string& name, int salt = 0) {
  CaseRecord r;
  r.name = name;
  r.attributes["experts"] = std::int64_t(8 + salt);
  r.attributes["zipf_exponent"] = 1.25 + salt;
  r.attributes["scheme"] = std::string("uint4b8-g32-bf16");
  r.datasets["weights/codes"] = {make_array<std::uint8_t>({2, 3}, {0, 1, 2, 13, 14, std::uint8_t(15 - salt)})};
  r.datasets["inputs/a"] = {
      make_array<std::uint16_t>({2, 2}, {0x3f80, 0xbf80, 0x0000, std::uint16_t(0x4000 + salt)}, DType::bf16)};
  r.datasets["routing/topk_ids"] = {make_array<std::int32_t>({3}, {0, -1, 7 + salt})};
  r.datasets["routing/topk_weights"] = {make_array<float>({3}, {0.5f, 0.25f, 0.125f + float(salt)})};
  r.datasets["expected/y"] = {make_array<double>({2, 2}, {1.0, -2.5, 1e-300, 3.0 + salt}), Compare::fp64_relative};
  r.datasets["weights/zeros"] = {make_array<std::uint8_t>({0, 4}, {})};
  return r;
}

}  // namespace moeval::golden::testing
