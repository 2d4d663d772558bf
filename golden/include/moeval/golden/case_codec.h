// Golden cases <-> records: what one case group of a family file holds (docs/golden.md, "Schema").
//
// Per case (docs/golden.md has the full table):
//   attributes  the MoeProblem (kind, E, M, topk, H, I, scheme, routing spec, tier, seed) and the
//               GEMM's a_row_divisor / mul_topk_weights, enough to rebuild it with the fixtures
//   expert_map  [E] int32 (expert-parallel cases only)
//   inputs/     a or x: 16-bit bits as uint16 with a `dtype` attribute
//   routing/    topk_ids [M, topk] int32, topk_weights [M, topk] float32
//   weights/    codes [E_l, K, N] uint8, scales [E_l, G, N] (dtype), zeros [E_l, G, N] uint8 (zero-
//               point types), g_idx [E_l, K], perm [E_l, K] (act-order); a layer has w13/ and w2/
//   layouts/    every packed layout of the family that applies (layouts.h)
//   expected/   y (fp64), y16 (dtype), s (fp64, the bound statistic S); a layer per stage:
//               gemm1/, act/, gemm2/, out/
// The 16-bit dequantized weights are not stored: the loader recomputes them with the fixtures'
// recipe (dequantize), the exact operand the reference multiplied.
#pragma once

#include <filesystem>
#include <map>
#include <span>
#include <string>

#include "moeval/fixtures/cases.h"
#include "moeval/golden/layouts.h"
#include "moeval/golden/record.h"
#include "moeval/reference/layer_reference.h"
#include "moeval/reference/reference_output.h"

namespace moeval::golden {

// A GEMM case as stored, ready for a kernel: the case, its expected outputs and the packed layouts
// ("marlin/qweight", ...) exactly as the file holds them.
struct GoldenGemmCase {
  GemmCase gemm;
  reference::ReferenceOutput expected;
  std::map<std::string, Array> layouts;
};

struct GoldenLayerCase {
  LayerCase layer;
  reference::LayerReference expected;
  std::map<std::string, Array> layouts;  // "marlin/w13/qweight", "wna16/w2/scales", ...
};

CaseRecord encode_gemm_case(const GemmCase& c, const reference::ReferenceOutput& expected,
                            std::span<const Layout> layouts);
CaseRecord encode_layer_case(const LayerCase& c, const reference::LayerReference& expected,
                             std::span<const Layout> layouts);

// `file` only names the source in errors: every inconsistency is a GoldenError naming file, case
// and attribute or dataset. The problem is validated as the fixtures validate it.
MoeProblem decode_problem(const CaseRecord& record, const std::filesystem::path& file);
GoldenGemmCase decode_gemm_case(const CaseRecord& record, const std::filesystem::path& file);
GoldenLayerCase decode_layer_case(const CaseRecord& record, const std::filesystem::path& file);

}  // namespace moeval::golden
