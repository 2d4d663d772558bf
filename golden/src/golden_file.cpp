#include "moeval/golden/golden_file.h"

#include <algorithm>

#include "moeval/golden/atomic_write.h"
#include "moeval/golden/errors.h"

namespace moeval::golden {
namespace {

void check_schema(const H5Group& root) {
  if (!root.has_attribute(root_attr::schema_version)) {
    throw golden_error(root.file(), "/", "has no schema_version attribute; it is not a moeval golden file");
  }
  const std::optional<std::int64_t> v = schema_version_of(root);
  if (!v || *v != kSchemaVersion) {
    const std::string found = v ? std::to_string(*v) : std::string("a non-integer");
    throw golden_error(root.file(), "/",
                       "schema_version is " + found + " but this build reads version " +
                           std::to_string(kSchemaVersion) +
                           "; regenerate with `moeval golden --update` or use the moeval that wrote it");
  }
}

}  // namespace

std::optional<std::int64_t> schema_version_of(const H5Group& root) {
  if (!root.has_attribute(root_attr::schema_version)) return std::nullopt;
  const AttrValue version = root.attribute(root_attr::schema_version);
  const auto* v = std::get_if<std::int64_t>(&version);
  return v ? std::optional<std::int64_t>(*v) : std::nullopt;
}

GoldenReader::GoldenReader(const std::filesystem::path& path) : path_(path), file_(H5File::open_read(path)) {
  const H5Group root = file_.root();
  check_schema(root);
  provenance_.schema_version = kSchemaVersion;
  provenance_.generator_version = root.string_attribute(root_attr::generator_version);
  provenance_.git_commit = root.string_attribute(root_attr::git_commit);
  provenance_.date = root.string_attribute(root_attr::date);
  provenance_.reference_backend = root.string_attribute(root_attr::reference_backend);
  family_ = root.string_attribute(root_attr::family);
  case_names_ = root.groups();
}

bool GoldenReader::has_case(const std::string& name) const {
  return std::binary_search(case_names_.begin(), case_names_.end(), name);
}

CaseRecord GoldenReader::read_case(const std::string& name) const {
  if (!has_case(name)) throw golden_error(path_, "case '" + name + "'", "no such case in this file");
  return read_record(file_.root(), name);
}

std::vector<CaseRecord> GoldenReader::read_all() const {
  std::vector<CaseRecord> cases;
  for (const std::string& name : case_names_) cases.push_back(read_case(name));
  return cases;
}

void write_golden_file(const std::filesystem::path& path, const Provenance& provenance, const std::string& family,
                       const std::vector<CaseRecord>& cases, const std::function<void()>& after_dataset) {
  replace_atomically(path, [&](const std::filesystem::path& temp) {
    H5File file = H5File::create(temp);
    {
      const H5Group root = file.root();
      root.set_attribute(root_attr::schema_version, provenance.schema_version);
      root.set_attribute(root_attr::generator_version, provenance.generator_version);
      root.set_attribute(root_attr::git_commit, provenance.git_commit);
      root.set_attribute(root_attr::date, provenance.date);
      root.set_attribute(root_attr::reference_backend, provenance.reference_backend);
      root.set_attribute(root_attr::family, family);
      for (const CaseRecord& record : cases) write_record(root, record, after_dataset);
    }
    file.close();
  });
}

}  // namespace moeval::golden
