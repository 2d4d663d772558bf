// A built case and everything a kernel consumes: activations, routing, the logical weights and
// every packed layout fixtures produce, as numpy arrays that view the C++ memory (no copies; the
// Case or Layout object stays alive while a view exists). 16-bit floats are raw uint16 bits with
// the dtype named beside them (numpy has no bfloat16); moeval.as_torch / moeval.decode convert.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "arrays.h"
#include "bindings.h"
#include "layouts.h"
#include "moeval/fixtures/cases.h"
#include "moeval/reference/align_reference.h"

namespace moeval::python {

void bind_case(nb::module_& m) {
  nb::class_<Layout>(m, "Layout", "One packed layout of a case's weights (fixtures' packers, bit for bit).")
      .def_ro("name", &Layout::name)
      .def_ro("attrs", &Layout::attrs)
      .def_prop_ro("arrays", [](const Layout& l) {
        nb::dict out;
        const nb::handle owner = nb::find(l);
        for (const Layout::Array& a : l.arrays) {
          std::visit([&](const auto& v) { out[a.name.c_str()] = view(v, a.shape, owner); }, a.data);
        }
        return out;
      }, "name -> numpy array (a view; 16-bit scales are raw bits, int32 words as uint32 or int32)");

  nb::class_<GemmCase>(m, "Case",
                       "A built GEMM case: out[t, n] = Σ_k a[t / a_row_divisor, k] · W[expert(t)][k, n] "
                       "(× topk_weights[t] when mul_topk_weights) for every routed row t = m·topk + j.")
      // A copy: Problem has setters, and a view would let `case.problem.tier = ...` change how the
      // built case is judged (or `p = case.problem; p.seed = 7` rewrite it) without rebuilding it.
      .def_prop_ro("problem", [](const GemmCase& c) { return MoeProblem(c.problem); }, nb::rv_policy::move,
                   "a copy of the problem this case was built from (editing it changes nothing here)")
      .def_prop_ro("dtype", [](const GemmCase& c) { return std::string(to_string(c.problem.scheme.act)); })
      .def_prop_ro("shape", [](const GemmCase& c) { return nb::make_tuple(c.shape.m, c.shape.n, c.shape.k); },
                   "(m, n, k): rows of a, output features, reduction size")
      .def_ro("a_row_divisor", &GemmCase::a_row_divisor)
      .def_ro("mul_topk_weights", &GemmCase::mul_topk_weights)
      .def_prop_ro("output_shape", [](const GemmCase& c) {
        return nb::make_tuple(c.routing.tokens * c.routing.topk, c.shape.n);
      }, "(M·topk, N): the routed rows the kernel writes")
      .def_prop_ro("a", [](const GemmCase& c) {
        return view(c.a, {Size(c.shape.m), Size(c.shape.k)}, nb::find(c));
      }, "activations [m, k], 16-bit bits")
      .def_prop_ro("topk_ids", [](const GemmCase& c) {
        return view(c.routing.topk_ids, {Size(c.routing.tokens), Size(c.routing.topk)}, nb::find(c));
      }, "[M, topk] int32, GLOBAL expert ids")
      .def_prop_ro("topk_weights", [](const GemmCase& c) {
        return view(c.routing.topk_weights, {Size(c.routing.tokens), Size(c.routing.topk)}, nb::find(c));
      }, "[M, topk] float32 routing weights")
      .def_prop_ro("expert_map", [](const GemmCase& c) {
        return c.problem.expert_map.empty() ? nb::object(nb::none())
                                            : nb::cast(view(c.problem.expert_map, {c.problem.expert_map.size()}, nb::find(c)));
      }, "[E] int32 global -> local expert (-1: another rank), or None")
      .def_prop_ro("codes", [](const GemmCase& c) {
        return view(c.w.codes, {Size(c.w.experts), Size(c.w.k), Size(c.w.n)}, nb::find(c));
      }, "logical codes [E_local, K, N] uint8 (checkpoint row order)")
      .def_prop_ro("scales", [](const GemmCase& c) {
        return view(c.w.scales, {Size(c.w.experts), Size(c.w.groups()), Size(c.w.n)}, nb::find(c));
      }, "[E_local, G, N] 16-bit bits")
      .def_prop_ro("zeros", [](const GemmCase& c) {
        return c.w.zeros.empty() ? nb::object(nb::none())
                                 : nb::cast(view(c.w.zeros, {Size(c.w.experts), Size(c.w.groups()), Size(c.w.n)}, nb::find(c)));
      }, "[E_local, G, N] uint8 zero points, or None for symmetric types")
      .def_prop_ro("g_idx", [](const GemmCase& c) {
        return view(c.w.g_idx, {Size(c.w.experts), Size(c.w.k)}, nb::find(c));
      })
      .def_prop_ro("perm", [](const GemmCase& c) {
        return c.w.perm.empty() ? nb::object(nb::none())
                                : nb::cast(view(c.w.perm, {Size(c.w.experts), Size(c.w.k)}, nb::find(c)));
      })
      .def_prop_ro("dequant", [](const GemmCase& c) {
        return view(c.w.dequant, {Size(c.w.experts), Size(c.w.k), Size(c.w.n)}, nb::find(c));
      }, "the 16-bit weights fl16((u - z)·s) [E_local, K, N], bits")
      .def_prop_ro("k_shards", [](const GemmCase& c) { return c.w.k_shards; })
      .def("layout", [](const GemmCase& c, const std::string& name) { return pack_layout(c, nul_escaped(name)); },
           nb::arg("name"),
           "The weights packed as 'wna16', 'marlin', 'gptq', 'awq' or 'compressed_tensors'.")
      .def("align", [](const GemmCase& c, std::int64_t block_size) {
        reference::AlignReference a = reference::reference_moe_align(c.routing, c.problem, block_size);
        nb::dict out;
        const Size padded = a.sorted_token_ids.size(), blocks = a.expert_ids.size();
        out["sorted_token_ids"] = owned(std::move(a.sorted_token_ids), {padded});
        out["expert_ids"] = owned(std::move(a.expert_ids), {blocks});
        out["num_tokens_post_padded"] = a.num_tokens_post_padded;
        out["block_size"] = a.block_size;
        return out;
      }, nb::arg("block_size"), "moe_align_block_size's reference output for this case's routing")
      .def("__repr__", [](const GemmCase& c) { return "<moeval.Case " + c.problem.name() + ">"; });

  // Bit-exact conversions (round to nearest even straight from double, as fixtures/half.h does).
  m.def("encode", [](const nb::ndarray<const double, nb::c_contig, nb::device::cpu>& values, const std::string& dtype) {
    const DType dt = parse_dtype(nul_escaped(dtype));
    std::vector<std::uint16_t> bits(values.size());
    for (Size i = 0; i < bits.size(); ++i) bits[i] = round_to_bits(values.data()[i], dt);
    std::vector<Size> shape(values.ndim());
    for (Size d = 0; d < shape.size(); ++d) shape[d] = values.shape(d);
    return owned(std::move(bits), shape);
  }, nb::arg("values"), nb::arg("dtype"), "float64 array -> 16-bit bits (uint16) of 'fp16' or 'bf16'");
  using Bits = nb::ndarray<const std::uint16_t, nb::c_contig, nb::device::cpu>;
  const auto decode = [](const Bits& bits, const std::string& dtype) {
    const DType dt = parse_dtype(nul_escaped(dtype));
    std::vector<double> values(bits.size());
    for (Size i = 0; i < values.size(); ++i) values[i] = to_double(bits.data()[i], dt);
    std::vector<Size> shape(bits.ndim());
    for (Size d = 0; d < shape.size(); ++d) shape[d] = bits.shape(d);
    return owned(std::move(values), shape);
  };
  const char* decode_doc = "16-bit bits (uint16) of 'fp16' or 'bf16' -> their exact float64 values";
  m.def("decode", decode, nb::arg("bits").noconvert(), nb::arg("dtype"), decode_doc);
  m.def("decode", [decode](nb::handle bits, const std::string& dtype) {
    return decode(bits_argument<Bits>(bits, "decode: bits", -1, ""), dtype);
  }, nb::arg("bits"), nb::arg("dtype"), decode_doc);

  // Python's to_bits and as_torch read dtype names through this, so they accept exactly the names
  // (and aliases: float16, half, bfloat16, ...) that Problem, encode and decode accept.
  m.def("dtype_name", [](const std::string& dtype) { return std::string(to_string(parse_dtype(nul_escaped(dtype)))); },
        nb::arg("dtype"), "The canonical name, 'fp16' or 'bf16', of a dtype name or alias; ValueError for others.");

  m.def("build_case", [](const MoeProblem& p) { return naming_memory("build_case", p, [&] { return build_gemm_case(p); }); },
        nb::arg("problem"),
        "Build the GEMM case a gemm1/gemm2 problem describes (deterministic from its seed).");
}

}  // namespace moeval::python
