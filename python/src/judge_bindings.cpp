// The CPU reference and the comparator: Reference (the fp64 values, their 16-bit rounding, S and
// per-element bounds), Verdict, and judge() — the same comparator `moeval check` uses.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cmath>
#include <span>

#include "arrays.h"
#include "bindings.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/tolerance/compare.h"

namespace moeval::python {
namespace {

using reference::ReferenceOutput;
using Size = std::size_t;
using Output16 = nb::ndarray<const std::uint16_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

// A reference and the problem it was computed for, so judge() can refuse one passed with another
// case (its values would be compared with the wrong case's output and could pass).
struct BoundReference : ReferenceOutput {
  MoeProblem problem;
};

// `function` is the one the user called (judge, compare, Reference.ratios), so that every
// message about the output names it: judge() reaches the comparator through _compare.
Output16 output_argument(nb::handle output, const std::string& function, const ReferenceOutput& ref) {
  return bits_argument<Output16>(output, function + ": output", 2,
                                 " [rows, cols] = [" + std::to_string(ref.rows) + ", " + std::to_string(ref.cols) + "]");
}

reference::Matrix16 as_matrix(const Output16& out, const ReferenceOutput& ref, const std::string& function) {
  if (std::int64_t(out.shape(0)) != ref.rows || std::int64_t(out.shape(1)) != ref.cols) {
    throw std::invalid_argument(function + ": the output is [" + std::to_string(out.shape(0)) + ", " +
                                std::to_string(out.shape(1)) + "] but the case's routed rows × N are [" +
                                std::to_string(ref.rows) + ", " + std::to_string(ref.cols) + "]");
  }
  return {std::span<const std::uint16_t>(out.data(), out.size()), ref.rows, ref.cols, ref.dtype};
}

Tier parse_tier(const std::string& tier) {
  if (tier == "exact") return Tier::exact;
  if (tier == "bounded") return Tier::bounded;
  throw std::invalid_argument("tier '" + nul_escaped(tier) + "' is not supported; allowed: exact, bounded");
}

}  // namespace

void bind_judge(nb::module_& m) {
  // Each function taking 16-bit output bits has a noconvert() overload (the bits as they are) and a
  // fallback that rejects other dtypes: implicit conversion would cast values into bit patterns.
  const auto ratios = [](const BoundReference& r, const Output16& out, const std::string& tier) {
    const Tier t = parse_tier(tier);
    return owned(tolerance::element_ratios(t, as_matrix(out, r, "Reference.ratios"), r), {Size(r.rows), Size(r.cols)});
  };
  const char* ratios_doc = "Per element what the gate compares with 1 (bounded: |error| / bound; exact: 0 or inf)";
  nb::class_<BoundReference>(m, "Reference", "The CPU reference (fp64) of a case under a numerics contract.")
      .def_ro("rows", &ReferenceOutput::rows)
      .def_ro("cols", &ReferenceOutput::cols)
      .def_prop_ro("dtype", [](const BoundReference& r) { return std::string(to_string(r.dtype)); })
      .def_ro("reduction_length", &ReferenceOutput::reduction_length)
      .def_ro("contract", &ReferenceOutput::contract)
      .def_prop_ro("output_roundings", [](const BoundReference& r) { return r.rounding.output_roundings; })
      .def_prop_ro("y", [](const BoundReference& r) { return view(r.y, {Size(r.rows), Size(r.cols)}, nb::find(r)); },
                   "fp64 values [rows, cols]")
      .def_prop_ro("y16", [](const BoundReference& r) { return view(r.y16, {Size(r.rows), Size(r.cols)}, nb::find(r)); },
                   "the contract's 16-bit result, bits [rows, cols]: what the exact tier requires bit for bit")
      .def_prop_ro("s", [](const BoundReference& r) { return view(r.s, {Size(r.rows), Size(r.cols)}, nb::find(r)); },
                   "S = sqrt(Σ_k t_k²) [rows, cols], the statistic of the bound")
      .def("bounds", [](const BoundReference& r) {
        std::vector<double> b(r.y.size(), 0.0);
        for (Size i = 0; i < b.size(); ++i) {
          if (std::isfinite(r.y[i])) b[i] = tolerance::element_bound(r.y[i], r.s[i], r.reduction_length, r.dtype, {}, r.rounding);
        }
        return owned(std::move(b), {Size(r.rows), Size(r.cols)});
      }, "The bounded tier's allowed |error| per element [rows, cols] (0 where y is not finite)")
      .def_prop_ro("problem", [](const BoundReference& r) { return MoeProblem(r.problem); }, nb::rv_policy::move,
                   "a copy of the problem of the case this reference was computed for")
      .def("ratios", ratios, nb::arg("output").noconvert(), nb::arg("tier"), ratios_doc)
      .def("ratios", [ratios](const BoundReference& r, nb::handle out, const std::string& tier) {
        return ratios(r, output_argument(out, "Reference.ratios", r), tier);
      }, nb::arg("output"), nb::arg("tier"), ratios_doc);

  nb::class_<tolerance::ElementReport>(m, "Element", "One output element as the comparator saw it.")
      .def_ro("row", &tolerance::ElementReport::row)
      .def_ro("col", &tolerance::ElementReport::col)
      .def_ro("value", &tolerance::ElementReport::value)
      .def_ro("reference", &tolerance::ElementReport::reference, "the fp64 reference")
      .def_ro("reference_rounded", &tolerance::ElementReport::reference_rounded,
              "reference_bits decoded: the value the exact tier compares with")
      .def_ro("bound", &tolerance::ElementReport::bound)
      .def_ro("ratio", &tolerance::ElementReport::ratio)
      .def_ro("value_bits", &tolerance::ElementReport::value_bits)
      .def_ro("reference_bits", &tolerance::ElementReport::reference_bits)
      .def("__repr__", [](const tolerance::ElementReport& e) {
        return "<moeval.Element (" + std::to_string(e.row) + ", " + std::to_string(e.col) + ") got " +
               std::to_string(e.value) + " want " + std::to_string(e.reference) + " ratio " + std::to_string(e.ratio) + ">";
      });

  nb::class_<tolerance::Verdict>(m, "Verdict", "The judgement of one output against its reference.")
      .def_prop_ro("passed", &tolerance::Verdict::pass, "numerics, and every hook that was checked")
      .def_ro("numerics_pass", &tolerance::Verdict::numerics_pass)
      .def_prop_ro("tier", [](const tolerance::Verdict& v) { return std::string(to_string(v.tier)); })
      .def_ro("rows", &tolerance::Verdict::rows)
      .def_ro("cols", &tolerance::Verdict::cols)
      .def_ro("violations", &tolerance::Verdict::violations, "elements outside the bound (bounded) / not equal (exact)")
      .def_prop_ro("mismatch_fraction", [](const tolerance::Verdict& v) {
        return v.rows * v.cols > 0 ? double(v.violations) / double(v.rows * v.cols) : 0.0;
      })
      .def_ro("first_violation", &tolerance::Verdict::first_violation)
      .def_ro("worst", &tolerance::Verdict::worst)
      .def_ro("max_ratio", &tolerance::Verdict::max_ratio)
      .def_ro("normwise", &tolerance::Verdict::normwise, "‖Δ‖_F / ‖y‖_F, reported, never the gate")
      .def_ro("observed_nan", &tolerance::Verdict::observed_nan)
      .def_ro("observed_inf", &tolerance::Verdict::observed_inf)
      .def_ro("canaries_intact", &tolerance::Verdict::canaries_intact, "None when not checked")
      .def_ro("deterministic", &tolerance::Verdict::deterministic, "None when not checked")
      .def_ro("contract", &tolerance::Verdict::contract)
      .def("summary", &tolerance::Verdict::summary)
      .def("__bool__", &tolerance::Verdict::pass)
      .def("__repr__", [](const tolerance::Verdict& v) { return "<moeval.Verdict " + v.summary() + ">"; });

  m.def("reference", [](const GemmCase& c, const reference::NumericsContract& contract) {
    return naming_memory("reference", c.problem,
                         [&] { return BoundReference{reference::reference_gemm(c, contract), c.problem}; });
  }, nb::arg("case"), nb::arg("contract") = reference::NumericsContract{},
        "The CPU reference of a case under a numerics contract (default: ours).");
  const auto compare = [](const BoundReference& ref, const Output16& out, const std::string& tier,
                          const std::string& function = "compare") {
    const Tier t = parse_tier(tier);
    return tolerance::compare(t, as_matrix(out, ref, function), ref);
  };
  const char* compare_doc = "The tier's comparator: output (uint16 bits [rows, cols]) against the reference.";
  m.def("compare", [compare](const BoundReference& ref, const Output16& out, const std::string& tier) {
    return compare(ref, out, tier);
  }, nb::arg("reference"), nb::arg("output").noconvert(), nb::arg("tier"), compare_doc);
  m.def("compare", [compare](const BoundReference& ref, nb::handle out, const std::string& tier) {
    return compare(ref, output_argument(out, "compare", ref), tier);
  }, nb::arg("reference"), nb::arg("output"), nb::arg("tier"), compare_doc);
  // compare() for moeval.judge (python/moeval/__init__.py): the same comparator, with messages
  // about the output naming `function` (judge), which the user called, instead of compare.
  m.def("_compare", [compare](const BoundReference& ref, nb::handle out, const std::string& tier,
                              const std::string& function) {
    return compare(ref, output_argument(out, function, ref), tier, function);
  }, nb::arg("reference"), nb::arg("output"), nb::arg("tier"), nb::arg("function"));
}

}  // namespace moeval::python
