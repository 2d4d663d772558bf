#include "moeval/golden/record.h"

#include "moeval/golden/errors.h"

namespace moeval::golden {
namespace {

// Opens (creating on first use) the group that holds `path`'s dataset; returns it and the leaf name.
std::pair<H5Group, std::string> parent_of(const H5Group& root, const std::string& path) {
  H5Group group = root;
  std::size_t start = 0;
  for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', start)) {
    const std::string part = path.substr(start, slash - start);
    if (part.empty())
      throw golden_error(root.file(), root.object_path(), "dataset path '" + path + "' has an empty part");
    group = group.has_child(part) ? group.group(part) : group.create_group(part);
    start = slash + 1;
  }
  return {group, path.substr(start)};
}

void read_datasets(const H5Group& group, const std::string& prefix, CaseRecord& record) {
  for (const std::string& name : group.datasets()) {
    record.datasets[prefix + name] = Dataset{group.read_array(name)};
  }
  for (const std::string& name : group.groups()) read_datasets(group.group(name), prefix + name + "/", record);
}

}  // namespace

void write_record(const H5Group& parent, const CaseRecord& record, const std::function<void()>& after_dataset) {
  const H5Group group = parent.create_group(record.name);
  for (const auto& [name, value] : record.attributes) group.set_attribute(name, value);
  for (const auto& [path, dataset] : record.datasets) {
    const auto [holder, leaf] = parent_of(group, path);
    holder.write_array(leaf, dataset.array);
    if (after_dataset) after_dataset();
  }
}

CaseRecord read_record(const H5Group& parent, const std::string& name) {
  const H5Group group = parent.group(name);
  CaseRecord record;
  record.name = name;
  for (const std::string& attr : group.attribute_names()) record.attributes[attr] = group.attribute(attr);
  read_datasets(group, "", record);
  return record;
}

}  // namespace moeval::golden
