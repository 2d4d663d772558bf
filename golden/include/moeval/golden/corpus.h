// The committed golden corpus: which problems each family file holds.
//
// Small sizes on purpose (the committed data stays a few MB and regenerates in seconds), chosen to
// cover the matrix: every scheme × fp16/bf16 × group size × act-order (is_k_full both ways) × every
// layout, E ∈ {1, 4, 8, 64, 256, 512}, topk up to 8, every routing kind incl. empty experts, an
// expert map (EP), exact and bounded tiers, and whole-layer cases.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "moeval/fixtures/problem.h"
#include "moeval/golden/layouts.h"

namespace moeval::golden {

enum class Family : std::uint8_t {
  wna16,    // GEMM cases in the WNA16 layout
  marlin,   // GEMM cases in the Marlin layout (act-order, is_k_full both ways)
  layouts,  // GEMM cases in the checkpoint packings: GPTQ, AWQ, compressed-tensors
  layer,    // whole-layer cases (WNA16 and Marlin layouts where they apply)
};

std::string_view to_string(Family family);
// Accepts the names above; throws std::invalid_argument listing them otherwise.
Family parse_family(std::string_view text);
const std::vector<Family>& all_families();
// "<family>.h5"
std::string file_name(Family family);

// The layouts a family stores (each only where layout_applies()).
std::vector<Layout> family_layouts(Family family);

// The family's problems, each valid (MoeProblem::validate) and with a unique name().
std::vector<MoeProblem> corpus(Family family);

}  // namespace moeval::golden
