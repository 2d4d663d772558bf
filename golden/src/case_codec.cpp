#include "moeval/golden/case_codec.h"

#include <cmath>
#include <cstdio>

#include "moeval/fixtures/errors.h"
#include "moeval/fixtures/layouts/logical_check.h"
#include "moeval/fixtures/quantize.h"
#include "problem_attributes.h"
#include "record_fields.h"

namespace moeval::golden {
namespace {

void put(CaseRecord& r, const std::string& path, Array array, Compare compare = Compare::bitwise) {
  r.datasets[path] = Dataset{std::move(array), compare};
}

// ---- encoding ----

void put_weights(CaseRecord& r, const std::string& p, const QuantizedWeights& w) {
  const std::int64_t g = w.groups();
  put(r, p + "codes", make_array<std::uint8_t>({w.experts, w.k, w.n}, w.codes));
  put(r, p + "scales", make_array<std::uint16_t>({w.experts, g, w.n}, w.scales, w.scheme.act));
  if (!w.zeros.empty()) put(r, p + "zeros", make_array<std::uint8_t>({w.experts, g, w.n}, w.zeros));
  put(r, p + "g_idx", make_array<std::int32_t>({w.experts, w.k}, w.g_idx));
  if (!w.perm.empty()) put(r, p + "perm", make_array<std::int32_t>({w.experts, w.k}, w.perm));
}

void put_routing(CaseRecord& r, const Routing& routing) {
  put(r, "routing/topk_ids", make_array<std::int32_t>({routing.tokens, routing.topk}, routing.topk_ids));
  put(r, "routing/topk_weights", make_array<float>({routing.tokens, routing.topk}, routing.topk_weights));
}

// fp64 values and S follow the 1e-12 relative rule (Eigen's blocking and SIMD width may differ
// between machines); the 16-bit rounding of y is compared bit for bit.
void put_expected(CaseRecord& r, const std::string& p, const std::string& tag, const reference::ReferenceOutput& o) {
  put(r, p + "y", make_array<double>({o.rows, o.cols}, o.y), Compare::fp64_relative);
  put(r, p + "y16", make_array<std::uint16_t>({o.rows, o.cols}, o.y16, o.dtype));
  put(r, p + "s", make_array<double>({o.rows, o.cols}, o.s), Compare::fp64_relative);
  r.attributes[tag + "_reduction_length"] = o.reduction_length;
}

void put_layouts(CaseRecord& r, const std::string& gemm_tag, const QuantizedWeights& w,
                 std::span<const Layout> layouts) {
  for (Layout layout : layouts) {
    const std::string name(to_string(layout));
    const std::string prefix = "layouts/" + name + "/" + (gemm_tag.empty() ? "" : gemm_tag + "/");
    add_layout(r, prefix, gemm_tag.empty() ? name : name + "_" + gemm_tag, layout, w);
  }
}

// ---- decoding ----

QuantizedWeights get_weights(const RecordFields& f, const std::string& p, const MoeProblem& problem, GemmShape shape,
                             std::int64_t k_shards) {
  QuantizedWeights w;
  w.scheme = problem.scheme;
  w.experts = problem.local_experts();
  w.k = shape.k;
  w.n = shape.n;
  w.k_shards = k_shards;
  const std::int64_t g = w.groups();
  w.codes = f.array<std::uint8_t>(p + "codes", {w.experts, w.k, w.n});
  w.scales = f.array<std::uint16_t>(p + "scales", {w.experts, g, w.n}, w.scheme.act);
  if (has_zero_point(w.scheme.type)) w.zeros = f.array<std::uint8_t>(p + "zeros", {w.experts, g, w.n});
  w.g_idx = f.array<std::int32_t>(p + "g_idx", {w.experts, w.k});
  if (w.scheme.act_order) w.perm = f.array<std::int32_t>(p + "perm", {w.experts, w.k});
  try {
    // Codes and zero points in range, g_idx in [0, G) (and k / group without act-order).
    layouts::check_logical(w, "golden");
    dequantize(w);  // the recipe's 16-bit weights: what the reference multiplied
  } catch (const InvalidProblem& e) {
    throw f.error("datasets " + p + "*", std::string("are not valid quantized weights: ") + e.what());
  }
  for (std::int64_t e = 0; e < w.experts && !w.perm.empty(); ++e) {
    std::vector<bool> seen(std::size_t(w.k), false);
    for (std::int64_t j = 0; j < w.k; ++j) {
      const std::int32_t row = w.perm[std::size_t(e * w.k + j)];
      if (row < 0 || row >= w.k || seen[std::size_t(row)]) {
        throw f.error("dataset " + p + "perm", "expert " + std::to_string(e) +
                                                   " is not a permutation of 0..K-1 (entry " + std::to_string(j) +
                                                   " = " + std::to_string(row) + ")");
      }
      seen[std::size_t(row)] = true;
    }
  }
  return w;
}

// Stored activations are finite: the fixtures never build NaN or Inf inputs, so a file holding
// them is corrupt or not ours (and a NaN input would make the kernel-vs-reference check vacuous).
std::vector<std::uint16_t> finite_inputs(const RecordFields& f, const std::string& path, const Shape& shape, DType act) {
  std::vector<std::uint16_t> values = f.array<std::uint16_t>(path, shape, act);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = to_double(values[i], act);
    if (!std::isfinite(v)) {
      char bits[8];
      std::snprintf(bits, sizeof bits, "0x%04x", unsigned(values[i]));
      throw f.error("dataset " + path, "element " + std::to_string(i) + " is " + (std::isnan(v) ? "NaN" : "infinite") +
                                           " (" + bits + "); stored inputs are finite");
    }
  }
  return values;
}

Routing get_routing(const RecordFields& f, const MoeProblem& problem) {
  Routing routing;
  routing.tokens = problem.tokens;
  routing.topk = problem.topk;
  routing.topk_ids = f.array<std::int32_t>("routing/topk_ids", {problem.tokens, problem.topk});
  routing.topk_weights = f.array<float>("routing/topk_weights", {problem.tokens, problem.topk});
  for (std::size_t i = 0; i < routing.topk_ids.size(); ++i) {
    if (routing.topk_ids[i] < 0 || routing.topk_ids[i] >= problem.experts) {
      throw f.error("dataset routing/topk_ids", "element " + std::to_string(i) + " = " +
                                                    std::to_string(routing.topk_ids[i]) +
                                                    " is outside [0, E = " + std::to_string(problem.experts) + ")");
    }
    if (!std::isfinite(routing.topk_weights[i])) {
      throw f.error("dataset routing/topk_weights",
                    "element " + std::to_string(i) + " is " + (std::isnan(routing.topk_weights[i]) ? "NaN" : "infinite") +
                        "; routing weights are finite");
    }
  }
  return routing;
}

reference::ReferenceOutput get_expected(const RecordFields& f, const std::string& p, const std::string& tag,
                                        std::int64_t rows, std::int64_t cols, DType dtype) {
  reference::ReferenceOutput o(rows, cols, dtype, f.integer(tag + "_reduction_length"));
  o.y = f.array<double>(p + "y", {rows, cols});
  o.y16 = f.array<std::uint16_t>(p + "y16", {rows, cols}, dtype);
  o.s = f.array<double>(p + "s", {rows, cols});
  return o;
}

std::map<std::string, Array> get_layouts(const CaseRecord& r) {
  std::map<std::string, Array> layouts;
  const std::string prefix = "layouts/";
  for (const auto& [path, dataset] : r.datasets) {
    if (path.rfind(prefix, 0) == 0) layouts[path.substr(prefix.size())] = dataset.array;
  }
  return layouts;
}

}  // namespace

CaseRecord encode_gemm_case(const GemmCase& c, const reference::ReferenceOutput& expected,
                            std::span<const Layout> layouts) {
  CaseRecord r;
  r.name = c.problem.name();
  put_problem(r, c.problem);
  r.attributes["a_row_divisor"] = c.a_row_divisor;
  r.attributes["mul_topk_weights"] = std::int64_t(c.mul_topk_weights);
  put(r, "inputs/a", make_array<std::uint16_t>({c.shape.m, c.shape.k}, c.a, c.problem.scheme.act));
  put_routing(r, c.routing);
  put_weights(r, "weights/", c.w);
  put_layouts(r, "", c.w, layouts);
  put_expected(r, "expected/", "expected", expected);
  return r;
}

CaseRecord encode_layer_case(const LayerCase& c, const reference::LayerReference& expected,
                             std::span<const Layout> layouts) {
  CaseRecord r;
  r.name = c.problem.name();
  put_problem(r, c.problem);
  put(r, "inputs/x", make_array<std::uint16_t>({c.problem.tokens, c.problem.hidden}, c.x, c.problem.scheme.act));
  put_routing(r, c.routing);
  put_weights(r, "weights/w13/", c.w13);
  put_weights(r, "weights/w2/", c.w2);
  put_layouts(r, "w13", c.w13, layouts);
  put_layouts(r, "w2", c.w2, layouts);
  put_expected(r, "expected/gemm1/", "gemm1", expected.gemm1);
  put_expected(r, "expected/act/", "act", expected.act);
  put_expected(r, "expected/gemm2/", "gemm2", expected.gemm2);
  put_expected(r, "expected/out/", "out", expected.out);
  return r;
}

MoeProblem decode_problem(const CaseRecord& record, const std::filesystem::path& file) {
  return get_problem(RecordFields(record, file));
}

GoldenGemmCase decode_gemm_case(const CaseRecord& record, const std::filesystem::path& file) {
  const RecordFields f(record, file);
  GoldenGemmCase out;
  GemmCase& c = out.gemm;
  c.problem = get_problem(f);
  if (c.problem.kind == ProblemKind::layer) throw f.error("attribute kind", "is 'layer'; this loader reads GEMM cases");
  c.shape = c.problem.gemm();
  c.a_row_divisor = f.integer("a_row_divisor");
  c.mul_topk_weights = f.flag("mul_topk_weights");
  // GEMM1 reads activation row slot / topk (one row a token), GEMM2 row slot (one a routed slot), and
  // only GEMM2 multiplies by the routing weights (build_gemm_case): a file that says otherwise would
  // rebuild another GEMM than its expected outputs were computed for.
  const bool gemm1 = c.problem.kind == ProblemKind::gemm1;
  const std::int64_t divisor = gemm1 ? c.problem.topk : 1;
  if (c.a_row_divisor != divisor) {
    throw f.error("attribute a_row_divisor", "is " + std::to_string(c.a_row_divisor) + "; a " + (gemm1 ? "gemm1" : "gemm2") +
                                                 " case with topk " + std::to_string(c.problem.topk) + " needs " +
                                                 std::to_string(divisor));
  }
  if (c.mul_topk_weights == gemm1) {
    throw f.error("attribute mul_topk_weights", std::string("is ") + (gemm1 ? "true" : "false") + "; a " +
                                                    (gemm1 ? "gemm1 case never multiplies" : "gemm2 case always multiplies") +
                                                    " by the routing weights");
  }
  const DType act = c.problem.scheme.act;
  c.a = finite_inputs(f, "inputs/a", {c.shape.m, c.shape.k}, act);
  c.routing = get_routing(f, c.problem);
  c.w = get_weights(f, "weights/", c.problem, c.shape,
                    c.problem.kind == ProblemKind::gemm1 ? c.problem.gemm1_k_shards() : c.problem.gemm2_k_shards());
  out.expected = get_expected(f, "expected/", "expected", c.problem.tokens * c.problem.topk, c.shape.n, act);
  out.layouts = get_layouts(record);
  return out;
}

GoldenLayerCase decode_layer_case(const CaseRecord& record, const std::filesystem::path& file) {
  const RecordFields f(record, file);
  GoldenLayerCase out;
  LayerCase& c = out.layer;
  c.problem = get_problem(f);
  const MoeProblem& p = c.problem;
  if (p.kind != ProblemKind::layer)
    throw f.error("attribute kind", "is '" + f.text("kind") + "'; this loader reads layer cases");
  const DType act = p.scheme.act;
  c.x = finite_inputs(f, "inputs/x", {p.tokens, p.hidden}, act);
  c.routing = get_routing(f, p);
  c.w13 = get_weights(f, "weights/w13/", p, p.gemm1(), p.gemm1_k_shards());
  c.w2 = get_weights(f, "weights/w2/", p, p.gemm2(), p.gemm2_k_shards());
  const std::int64_t rows = p.tokens * p.topk;
  out.expected.gemm1 = get_expected(f, "expected/gemm1/", "gemm1", rows, 2 * p.inter, act);
  out.expected.act = get_expected(f, "expected/act/", "act", rows, p.inter, act);
  out.expected.gemm2 = get_expected(f, "expected/gemm2/", "gemm2", rows, p.hidden, act);
  out.expected.out = get_expected(f, "expected/out/", "out", p.tokens, p.hidden, act);
  out.layouts = get_layouts(record);
  return out;
}

}  // namespace moeval::golden
