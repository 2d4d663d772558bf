// CaseRecord: one golden case as the file holds it — the problem as attributes and named datasets.
//
// Codecs turn fixtures types into records and back; the HDF5 reader/writer and the diff only ever
// see records, so the schema of a case lives in one place (case_codec) and the rest stays generic.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "moeval/golden/array.h"
#include "moeval/golden/h5.h"

namespace moeval::golden {

// How `moeval golden --check` compares a regenerated dataset with the stored one.
enum class Compare : std::uint8_t {
  bitwise,        // codes, layouts, 16-bit values, routing: every bit must match
  fp64_relative,  // fp64 reference outputs: |stored - regenerated| <= 1e-12 · max(‖stored‖∞, ‖regen‖∞)
};

// The relative tolerance of Compare::fp64_relative (docs/golden.md explains the choice).
inline constexpr double kFp64RelativeTolerance = 1e-12;

struct Dataset {
  Array array;
  Compare compare = Compare::bitwise;  // not stored: the regenerating code decides the rule
};

struct CaseRecord {
  std::string name;                             // the case's group name in its family file
  std::map<std::string, AttrValue> attributes;  // the problem, enough to rebuild it
  // Datasets by path relative to the case group ("inputs/a", "layouts/marlin/w13/qweight", ...).
  std::map<std::string, Dataset> datasets;
};

// Writes a record as a group of `parent` (intermediate groups created from the dataset paths).
// `after_dataset` runs after each dataset is written (the interrupted-update test throws from it).
void write_record(const H5Group& parent, const CaseRecord& record, const std::function<void()>& after_dataset = {});
// Reads the group `name` of `parent` back, every dataset of every subgroup included.
CaseRecord read_record(const H5Group& parent, const std::string& name);

}  // namespace moeval::golden
