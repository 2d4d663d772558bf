// A CPU model of a GEMM kernel over routed rows, written independently of the reference (plain
// loops, fp32 arithmetic as a GPU kernel does it), so bugs can be injected into a copy of the
// path and the comparator's power measured (docs/tolerance.md, "Bounded tier":
// the calibration's catches reproduced on the CPU).
#pragma once

#include <cstdint>
#include <vector>

#include "moeval/fixtures/cases.h"

namespace moeval::testing {

enum class Accumulator : std::uint8_t {
  fp32,          // correct: fp32 running sum of exact products
  fp32_reverse,  // correct, another order (k descending): the exact tier must not care
  rounded16,     // bug: the running sum is rounded to the 16-bit output type after every add
};

enum class OutputRounding : std::uint8_t {
  nearest_even,  // correct
  toward_zero,   // bug: the fp32 → 16-bit conversion truncates (off by at most one ulp)
};

// Where the simulated kernel rounds (the numerics contract it implements, whatever it declares).
struct SimulatedNumerics {
  DequantRecipe dequant = DequantRecipe::sub_then_mul;  // computed here in fp32, not by fixtures
  bool weight_after_rounding = false;  // y = fl16(fl32(fl16(Σ)·ω)) instead of fl16(Σ·ω)
};

// out[t, n] for every flat routed row t of the case, as 16-bit bits [T][N]: sum over k of
// a · dequant in the accumulator, × topk_weights[t] in fp32 when mul_topk_weights, then one
// rounding to the activation dtype. Rows of non-local experts are zero. `numerics` moves the
// rounding points as a kernel written elsewhere would.
std::vector<std::uint16_t> simulate_gemm(const GemmCase& c, Accumulator accumulator = Accumulator::fp32,
                                         OutputRounding rounding = OutputRounding::nearest_even,
                                         const SimulatedNumerics& numerics = {});

// Bugs injected into a copy of the case's weights (the dequant is re-derived by fixtures'
// dequantize, exactly as a kernel with that bug would see its operand).
// (a) the scale of (expert, group, column) is taken from column + 1.
GemmCase with_neighbour_scale(GemmCase c, std::int32_t expert, std::int64_t group, std::int64_t column);
// (b) the code at (expert, k, column) is off by one (+1, or −1 at the top of the range).
GemmCase with_code_off_by_one(GemmCase c, std::int32_t expert, std::int64_t k, std::int64_t column);
// (d) output row `row` of a [rows][cols] output zeroed (a dropped row).
void drop_row(std::vector<std::uint16_t>& out, std::int64_t cols, std::int64_t row);

}  // namespace moeval::testing
