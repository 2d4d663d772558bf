#include "moeval/reference/gemm_reference.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "decode_table.h"
#include "moeval/fixtures/quantize.h"
#include "moeval/fixtures/parallel_for.h"

namespace moeval::reference {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Columns of W decoded per task: 64 doubles × K = 3.7 MB at K = 7168, and enough tasks (N / 64)
// to keep every thread busy even when a single expert has rows (decode, M = 1).
constexpr std::int64_t kColumnChunk = 64;
// Gathered activations held at once (doubles, twice: A and A∘A): 16M values = 256 MB.
constexpr std::int64_t kGatherBudget = std::int64_t(1) << 24;

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument("reference_gemm: " + message); }

void validate(const GemmOperands& op) {
  op.a.validate("reference_gemm: activations a");
  const QuantizedWeights& w = op.w;
  if (op.a.cols != w.k) {
    fail("a has K = " + std::to_string(op.a.cols) + " columns but the weights have K = " + std::to_string(w.k));
  }
  if (op.a.dtype != w.scheme.act) {
    fail(std::string("a is ") + std::string(to_string(op.a.dtype)) + " but the weights' scheme is " +
         std::string(to_string(w.scheme.act)) + "; activations, scales and outputs share one dtype");
  }
  if (w.experts < 0 || w.k < 1 || w.n < 1 || std::int64_t(w.dequant.size()) != w.experts * w.k * w.n) {
    fail("weights' dequant holds " + std::to_string(w.dequant.size()) + " values; [E_local = " +
         std::to_string(w.experts) + "][K = " + std::to_string(w.k) + "][N = " + std::to_string(w.n) + "] needs " +
         std::to_string(w.experts * w.k * w.n));
  }
  for (const RoutedRow& r : op.routed.rows()) {
    if (r.expert >= w.experts) {
      fail("routed row " + std::to_string(r.out_row) + " uses local expert " + std::to_string(r.expert) +
           " but the weights hold " + std::to_string(w.experts) + " experts");
    }
    if (r.a_row >= op.a.rows) {
      fail("routed row " + std::to_string(r.out_row) + " reads a row " + std::to_string(r.a_row) + " of " +
           std::to_string(op.a.rows) + " (a_row_divisor does not match the shape of a)");
    }
  }
}

// One expert's share of the work: rows [begin, end) of the canonical routed list.
struct ExpertSlice {
  std::int32_t expert;
  std::size_t begin;
  std::size_t end;
};

std::vector<ExpertSlice> slice_by_expert(std::span<const RoutedRow> rows) {
  std::vector<ExpertSlice> slices;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j < rows.size() && rows[j].expert == rows[i].expert) ++j;
    slices.push_back({rows[i].expert, i, j});
    i = j;
  }
  return slices;
}

// The weights of one expert and column chunk as the contract's kernel multiplies them. The default
// recipe reads fixtures' dequant (the kernel's 16-bit operand); the others are recomputed from the
// logical codes, zero points and scales by fixtures' dequant_value.
RowMatrix chunk_weights(const QuantizedWeights& w, DequantRecipe recipe, std::int32_t expert, std::int64_t n0,
                        std::int64_t width) {
  RowMatrix wd(w.k, width);
  if (recipe == DequantRecipe::sub_then_mul) {
    const double* table = decode_table(w.scheme.act);
    const std::uint16_t* src = w.dequant.data() + w.code_index(expert, 0, n0);
    for (std::int64_t k = 0; k < w.k; ++k) {
      for (std::int64_t j = 0; j < width; ++j) wd(k, j) = table[src[k * w.n + j]];
    }
    return wd;
  }
  for (std::int64_t k = 0; k < w.k; ++k) {
    const std::int64_t g = w.g_idx[std::size_t(expert * w.k + k)];
    for (std::int64_t j = 0; j < width; ++j) {
      const std::int64_t n = n0 + j;
      wd(k, j) = dequant_value(recipe, w.codes[w.code_index(expert, k, n)], w.zero_at(expert, g, n),
                               w.scales[w.group_index(expert, g, n)], w.scheme.act);
    }
  }
  return wd;
}

// y = A·W and S² = (A∘A)·(W∘W) for one expert and one column chunk, scattered to the output rows.
// With two output roundings (numerics_contract.h) y16 is written here: round16(round16(Σ)·weight).
void run_chunk(const GemmOperands& op, const ExpertSlice& slice, const RowMatrix& a, const RowMatrix& a2,
               std::int64_t n0, ReferenceOutput& out) {
  const QuantizedWeights& w = op.w;
  const std::int64_t width = std::min(kColumnChunk, w.n - n0);
  const RowMatrix wd = chunk_weights(w, op.contract.dequant, slice.expert, n0, width);
  const RowMatrix y = a * wd;
  const RowMatrix s2 = a2 * wd.cwiseAbs2();
  const bool round_before_weight = out.rounding.output_roundings == 2;
  const auto rows = op.routed.rows();
  for (std::size_t i = slice.begin; i < slice.end; ++i) {
    const RoutedRow& r = rows[i];
    const double weight = op.mul_topk_weights ? double(r.weight) : 1.0;
    const Eigen::Index local = Eigen::Index(i - slice.begin);
    for (std::int64_t j = 0; j < width; ++j) {
      const std::size_t at = out.index(r.out_row, n0 + j);
      out.y[at] = weight * y(local, j);
      out.s[at] = std::fabs(weight) * std::sqrt(s2(local, j));
      // round16(Σ)·weight is exact in double (11 or 8 significant bits times 24).
      if (round_before_weight) out.y16[at] = round_to_bits(round_to(y(local, j), w.scheme.act) * weight, w.scheme.act);
    }
  }
}

}  // namespace

ReferenceOutput reference_gemm(const GemmOperands& op) {
  validate(op);
  const QuantizedWeights& w = op.w;
  ReferenceOutput out(op.routed.output_rows(), w.n, w.scheme.act, w.k);
  out.contract = op.contract;
  out.rounding = rounding_model(op.contract, op.mul_topk_weights);
  const double* table = decode_table(op.a.dtype);
  const auto rows = op.routed.rows();
  const std::int64_t chunks = (w.n + kColumnChunk - 1) / kColumnChunk;
  const std::vector<ExpertSlice> slices = slice_by_expert(rows);
  // Experts are processed in batches whose gathered A fits kGatherBudget values, and all
  // (expert, column chunk) pairs of a batch are one parallel loop: with E = 256 and small N an
  // expert alone has too few chunks to feed the threads.
  for (std::size_t first = 0; first < slices.size();) {
    std::size_t last = first;
    std::int64_t values = 0;
    auto gathered = [&](const ExpertSlice& slice) { return std::int64_t(slice.end - slice.begin) * w.k; };
    while (last < slices.size() && (last == first || values + gathered(slices[last]) <= kGatherBudget)) {
      values += gathered(slices[last]);
      ++last;
    }
    std::vector<RowMatrix> a(last - first);
    std::vector<RowMatrix> a2(last - first);
    parallel_for(std::int64_t(last - first), [&](std::int64_t b) {
      const ExpertSlice& slice = slices[first + std::size_t(b)];
      RowMatrix& ab = a[std::size_t(b)];
      ab.resize(Eigen::Index(slice.end - slice.begin), w.k);
      for (std::size_t i = slice.begin; i < slice.end; ++i) {
        for (std::int64_t k = 0; k < w.k; ++k) ab(Eigen::Index(i - slice.begin), k) = table[op.a.at(rows[i].a_row, k)];
      }
      a2[std::size_t(b)] = ab.cwiseAbs2();
    });
    parallel_for(std::int64_t(last - first) * chunks, [&](std::int64_t task) {
      const std::size_t b = std::size_t(task / chunks);
      run_chunk(op, slices[first + b], a[b], a2[b], (task % chunks) * kColumnChunk, out);
    });
    first = last;
  }
  // Two roundings: run_chunk wrote y16 of the routed rows; the others are zero (bits 0) already.
  if (out.rounding.output_roundings == 1) out.round_outputs();
  return out;
}

ReferenceOutput reference_gemm(const GemmCase& gemm_case, const NumericsContract& contract) {
  const RoutedRows routed = RoutedRows::from_topk(gemm_case.routing, gemm_case.problem, gemm_case.a_row_divisor);
  const Matrix16 a{gemm_case.a, gemm_case.shape.m, gemm_case.shape.k, gemm_case.problem.scheme.act};
  return reference_gemm(GemmOperands{a, gemm_case.w, routed, gemm_case.mul_topk_weights, contract});
}

}  // namespace moeval::reference
