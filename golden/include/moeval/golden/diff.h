// Diff of stored and regenerated golden cases: what `moeval golden --check` reports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "moeval/golden/record.h"

namespace moeval::golden {

struct Difference {
  std::string case_name;
  std::string dataset;              // dataset path, "@name" for an attribute, "" for the case itself
  std::string what;                 // "value", "shape", "type", "dtype", "missing", "extra", "attribute"
  std::vector<std::int64_t> index;  // multi-index of the first differing element ("value" only)
  std::string stored;               // readable stored value (bits and value for 16-bit floats)
  std::string regenerated;
  std::int64_t differing = 0;  // "value": how many elements of the dataset differ
};

// Compares one case. Datasets use the regenerated record's Compare rule; attributes must be equal.
// At most one Difference per dataset (its first differing element, with the count).
// How many distinct cases the differences touch ("1 of 49 cases differs", not "49 cases DIFFER").
std::size_t differing_cases(const std::vector<Difference>& differences);

std::vector<Difference> diff_case(const CaseRecord& stored, const CaseRecord& regenerated);

// Compares whole families by case name: cases only stored are "extra", only regenerated "missing".
std::vector<Difference> diff_cases(const std::vector<CaseRecord>& stored, const std::vector<CaseRecord>& regenerated);

// One line: "case <name>: dataset <d> [i, j]: stored <s>, regenerated <r> (n of m elements differ)".
std::string format(const Difference& d);

}  // namespace moeval::golden
