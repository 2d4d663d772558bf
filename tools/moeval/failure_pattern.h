// Where a failing output is wrong: which rows, columns and experts hold the mismatching elements,
// where they sit inside the kernels' tiles, and a coarse map of the output. A wrong scale or code
// in one (group, column) lights one column in every row of an expert; a tile-indexing bug repeats
// with the tile's period; a routing bug takes whole rows; a wrong scale permutation moves whole
// 8-column groups. The verdict stays the comparator's; this only describes it. K-groups cannot be
// told apart from the outputs alone (each output sums all of K): k_group_attribution.h does it
// with the case's inputs at hand.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "moeval/fixtures/problem.h"
#include "moeval/reference/reference_output.h"

namespace moeval::cli {

struct FailurePattern {
  std::int64_t mismatches = 0;
  std::int64_t elements = 0;
  // {"rows": {"count", "of", "first"}, "cols": {...}, "experts": {"count", "of", "counts": [per
  //  expert]}, "col_in_tile64": [64 counts], "col_in_tile8": [8 counts], "col_tiles8" and
  //  "col_tiles64": {"count", "of", "first"} over the 8- and 64-column groups, "row_in_tile16":
  //  [16 counts], "map": {"rows", "cols", "row_step", "col_step", "fraction": [[...]]}; a failing
  //  check adds "k_groups" (k_group_attribution.h)}
  nlohmann::json json;
  // "37 of 8192 elements (0.45%) in 37 of 64 rows, 1 of 128 columns (col 5), 3 of 16 experts (2, 7,
  //  9); column within a 64-wide tile: 5 only"
  std::string summary;
};

// Whether element i of `output` is one the tier rejects (below).
bool element_mismatch(const std::vector<std::uint16_t>& output, const reference::ReferenceOutput& ref, Tier tier,
                      std::size_t i);

// A mismatch is an element the tier rejects: in the exact tier, bits that differ from the
// reference's rounding; in the bounded tier, |value − y| above the element's bound (or a NaN/Inf
// where the reference is finite). `row_expert` maps an output row (a routed slot) to its global
// expert, or is empty (rows then carry no expert).
FailurePattern failure_pattern(const std::vector<std::uint16_t>& output, const reference::ReferenceOutput& ref, Tier tier,
                               const std::vector<std::int32_t>& row_expert, std::int64_t experts);

}  // namespace moeval::cli
