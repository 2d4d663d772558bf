// Which K-group's scales could explain a failing GEMM: the diagnose step that needs the case's
// inputs (a failing check has them, and `moeval check --repro` has them from the file).
//
// Why it is derivable. An output sums every K-group: y[t, n] = Σ_g c_g[t, n] with
// c_g[t, n] = ω_t · Σ_{k in group g} a[t, k] · w[e(t)][k][n] (group g by the case's g_idx, so
// act-order's scattered groups too). A wrong scale of (expert e, group g, column n), whether taken
// from a wrong group index or a wrong column, multiplies c_g[·, n] over the rows of expert e by one
// factor f: the error Δ[t, n] = y_kernel − y_ref is then (f − 1)·c_g[t, n], proportional to one
// group's contribution. So, for each (expert, column) with mismatches, Δ over the expert's rows is
// fitted by each group's contribution alone (least squares through the origin); the share of
// ‖Δ‖² a group explains is its R². A group explaining nearly all of it is named, with the factor
// its scale is off by; a bug that is not one group's scale (a dropped K tile spans several, a code
// off by one is one term of a group) explains less, and the report says no single K-group does.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/reference/reference_output.h"

namespace moeval::cli {

struct KGroupSuspect {
  std::int32_t expert = -1;   // local expert
  std::int64_t column = -1;
  std::int64_t mismatches = 0;
  std::int64_t rows = 0;      // routed rows of the expert: the data points of the fit
  std::int64_t group = -1;    // the group whose contribution explains Δ best
  double explained = 0.0;     // its R² (share of ‖Δ‖²), 0..1
  double factor = 1.0;        // 1 + the fitted coefficient: what the group's scale looks multiplied by
};

struct KGroupAttribution {
  std::vector<KGroupSuspect> suspects;  // the (expert, column) pairs with most mismatches first
  // {"groups": G, "suspects": [{"expert", "column", "mismatches", "rows", "group", "explained", "factor"}]}
  nlohmann::json json;
  // "expert 1, column 5: K-group 2 explains 99.9% (scale ×1.25); ..." or why there is nothing to say.
  std::string summary;
};

// An explained share at or above this names the group as the one, over at least kMinRows rows
// (one row is fitted exactly by any group).
inline constexpr double kExplainedEnough = 0.9;
inline constexpr std::int64_t kMinRows = 2;

// `output` is the kernel's [rows][N] output of `gemm_case`, judged against `ref` under `tier`. At
// most `max_suspects` (expert, column) pairs are examined, most mismatches first.
KGroupAttribution k_group_attribution(const GemmCase& gemm_case, const std::vector<std::uint16_t>& output,
                                      const reference::ReferenceOutput& ref, Tier tier, std::size_t max_suspects = 8);

}  // namespace moeval::cli
