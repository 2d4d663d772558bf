// One golden family file: root provenance attributes and one group per case.
#pragma once

#include <filesystem>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "moeval/golden/h5.h"
#include "moeval/golden/record.h"
#include "moeval/golden/schema.h"

namespace moeval::golden {

// The schema_version a golden file's root carries; nullopt where it has none or a non-integer.
std::optional<std::int64_t> schema_version_of(const H5Group& root);

// Opens a golden file for reading and validates it: exists, is HDF5, carries this build's
// schema_version and every provenance attribute. Each failure is one GoldenError naming the file.
class GoldenReader {
 public:
  explicit GoldenReader(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  const Provenance& provenance() const { return provenance_; }
  const std::string& family() const { return family_; }
  // Case names (group names), sorted.
  const std::vector<std::string>& case_names() const { return case_names_; }
  bool has_case(const std::string& name) const;
  // GoldenError naming the case when it is absent or unreadable.
  CaseRecord read_case(const std::string& name) const;
  std::vector<CaseRecord> read_all() const;

 private:
  std::filesystem::path path_;
  H5File file_;
  Provenance provenance_;
  std::string family_;
  std::vector<std::string> case_names_;
};

// Writes a whole family file atomically (temp file + fsync + rename). `after_dataset` is a test
// hook run after every dataset; if it throws, the old file stays as it was and no temp file remains.
void write_golden_file(const std::filesystem::path& path, const Provenance& provenance, const std::string& family,
                       const std::vector<CaseRecord>& cases, const std::function<void()>& after_dataset = {});

}  // namespace moeval::golden
