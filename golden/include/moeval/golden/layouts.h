// The packed layouts a golden case stores next to its logical codes (fixtures/layouts/).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "moeval/fixtures/weights.h"
#include "moeval/golden/record.h"

namespace moeval::golden {

enum class Layout : std::uint8_t { wna16, marlin, gptq, awq, compressed_tensors };

// "wna16", "marlin", "gptq", "awq", "compressed_tensors": the group name under layouts/.
std::string_view to_string(Layout layout);

// Whether `layout` can hold weights of this scheme and GEMM shape (K = k, N = n):
//   wna16               no act-order (the kernels read no g_idx); K, N even for 4-bit
//   marlin              K % 16 == 0 and N % 64 == 0 (act-order with zero points is no valid scheme)
//   gptq                symmetric types only (v1 stores zero − 1, so a true zero 0 cannot exist);
//                       K and N multiples of the pack factor
//   awq                 4-bit, no act-order, N % 8 == 0
//   compressed_tensors  always
bool layout_applies(Layout layout, const QuantScheme& scheme, std::int64_t k, std::int64_t n);

// Packs `w` and adds its tensors to `record` as datasets "<prefix><tensor>" (int32 checkpoints
// tensors stored as int32 with the packed bits unchanged). Marlin's scale permutation is recorded
// as the attribute "<tag>_scale_order". Throws InvalidProblem when the layout refuses `w`.
void add_layout(CaseRecord& record, const std::string& prefix, const std::string& tag, Layout layout,
                const QuantizedWeights& w);

}  // namespace moeval::golden
