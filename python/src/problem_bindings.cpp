// Problems, numerics contracts and named matrices. Enumerations travel as their stable names
// ("gemm1", "uint4b8", "bf16", ...), the same words moeval's reports and file names use.
#include <nanobind/operators.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "bindings.h"
#include "python_int.h"
#include "moeval/fixtures/problem.h"
#include "moeval/reference/numerics_contract.h"
#include "moeval/testbed/matrices.h"

namespace moeval::python {
namespace {

template <class Enum, std::size_t N>
Enum parse_name(const std::string& what, const std::string& text, const Enum (&values)[N]) {
  std::string allowed;
  for (Enum v : values) {
    if (text == to_string(v)) return v;
    allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(v));
  }
  throw std::invalid_argument(what + " '" + nul_escaped(text) + "' is not supported; allowed: " + allowed);
}

// The integer fields: any Python integer that fits the field's C++ type; otherwise checked()'s
// error naming the field (ValueError out of range, TypeError for a bool or a float).
using I64 = PythonInt<std::int64_t>;
template <class T>
T field(const char* name, const PythonInt<T>& v) {
  return checked("Problem", name, v);
}

// expert_map's entries, each an int32 ("expert_map[i]" in the message; the name is built only for
// an entry that is refused).
std::vector<std::int32_t> map_field(const std::vector<PythonInt<std::int32_t>>& v) {
  std::vector<std::int32_t> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const bool fits = v[i].kind == PythonInt<std::int32_t>::Kind::fits;
    out.push_back(fits ? v[i].value : field(("expert_map[" + std::to_string(i) + "]").c_str(), v[i]));
  }
  return out;
}

// Value equality of problems: MoeProblem's own (every field), with a NaN zipf_exponent taken as
// equal to a NaN one, so that a Problem equals itself even before validate() refuses the NaN.
bool same_problem(MoeProblem a, MoeProblem b) {
  if (std::isnan(a.routing.zipf_exponent) && std::isnan(b.routing.zipf_exponent)) {
    a.routing.zipf_exponent = b.routing.zipf_exponent = 0.0;
  }
  return a == b;
}

constexpr ProblemKind kKinds[] = {ProblemKind::gemm1, ProblemKind::gemm2, ProblemKind::layer};
constexpr Tier kTiers[] = {Tier::exact, Tier::bounded};
constexpr RoutingKind kRoutings[] = {RoutingKind::softmax_topk, RoutingKind::uniform, RoutingKind::zipf,
                                     RoutingKind::all_to_one, RoutingKind::empty_experts};

}  // namespace

void bind_problem(nb::module_& m) {
  const MoeProblem d;
  nb::class_<MoeProblem>(m, "Problem",
                         "One check: shapes (E experts, M tokens, topk, H hidden, I inter), quantization scheme, "
                         "routing, expert-parallel map, tier and seed. Cases are built from it deterministically.")
      .def(
          "__init__",
          [](MoeProblem* self, const std::string& kind, I64 experts, I64 tokens, I64 topk, I64 hidden, I64 inter,
             const std::string& weight_type, PythonInt<int> group_size, bool act_order, bool is_k_full,
             const std::string& dtype, const std::string& routing, bool renormalize, double zipf_exponent,
             I64 empty_experts, const std::vector<PythonInt<std::int32_t>>& expert_map, const std::string& tier,
             PythonInt<std::uint64_t> seed, I64 k_shards, I64 k_shard_rank) {
            MoeProblem p;
            p.kind = parse_name("kind", kind, kKinds);
            p.experts = field("experts", experts);
            p.tokens = field("tokens", tokens);
            p.topk = field("topk", topk);
            p.hidden = field("hidden", hidden);
            p.inter = field("inter", inter);
            p.scheme = {parse_weight_type(nul_escaped(weight_type)), field("group_size", group_size), act_order, is_k_full,
                        parse_dtype(nul_escaped(dtype))};
            p.routing = {parse_name("routing", routing, kRoutings), renormalize, zipf_exponent,
                         field("empty_experts", empty_experts)};
            p.expert_map = map_field(expert_map);
            p.tier = parse_name("tier", tier, kTiers);
            p.seed = field("seed", seed);
            p.k_shards = field("k_shards", k_shards);
            p.k_shard_rank = field("k_shard_rank", k_shard_rank);
            new (self) MoeProblem(std::move(p));
          },
          nb::kw_only(), nb::arg("kind") = std::string(to_string(d.kind)), nb::arg("experts") = d.experts,
          nb::arg("tokens") = d.tokens, nb::arg("topk") = d.topk, nb::arg("hidden") = d.hidden,
          nb::arg("inter") = d.inter, nb::arg("weight_type") = std::string(to_string(d.scheme.type)),
          nb::arg("group_size") = d.scheme.group_size, nb::arg("act_order") = d.scheme.act_order,
          nb::arg("is_k_full") = d.scheme.is_k_full, nb::arg("dtype") = std::string(to_string(d.scheme.act)),
          nb::arg("routing") = std::string(to_string(d.routing.kind)), nb::arg("renormalize") = d.routing.renormalize,
          nb::arg("zipf_exponent") = d.routing.zipf_exponent, nb::arg("empty_experts") = d.routing.empty_experts,
          nb::arg("expert_map") = std::vector<std::int32_t>{}, nb::arg("tier") = std::string(to_string(d.tier)),
          nb::arg("seed") = d.seed, nb::arg("k_shards") = d.k_shards, nb::arg("k_shard_rank") = d.k_shard_rank)
      .def_prop_rw("kind", [](const MoeProblem& p) { return std::string(to_string(p.kind)); },
                   [](MoeProblem& p, const std::string& v) { p.kind = parse_name("kind", v, kKinds); })
      .def_prop_rw("experts", [](const MoeProblem& p) { return p.experts; },
                   [](MoeProblem& p, I64 v) { p.experts = field("experts", v); })
      .def_prop_rw("tokens", [](const MoeProblem& p) { return p.tokens; },
                   [](MoeProblem& p, I64 v) { p.tokens = field("tokens", v); })
      .def_prop_rw("topk", [](const MoeProblem& p) { return p.topk; },
                   [](MoeProblem& p, I64 v) { p.topk = field("topk", v); })
      .def_prop_rw("hidden", [](const MoeProblem& p) { return p.hidden; },
                   [](MoeProblem& p, I64 v) { p.hidden = field("hidden", v); })
      .def_prop_rw("inter", [](const MoeProblem& p) { return p.inter; },
                   [](MoeProblem& p, I64 v) { p.inter = field("inter", v); })
      .def_prop_rw("weight_type", [](const MoeProblem& p) { return std::string(to_string(p.scheme.type)); },
                   [](MoeProblem& p, const std::string& v) { p.scheme.type = parse_weight_type(nul_escaped(v)); })
      .def_prop_rw("group_size", [](const MoeProblem& p) { return p.scheme.group_size; },
                   [](MoeProblem& p, PythonInt<int> v) { p.scheme.group_size = field("group_size", v); })
      .def_prop_rw("act_order", [](const MoeProblem& p) { return p.scheme.act_order; },
                   [](MoeProblem& p, bool v) { p.scheme.act_order = v; })
      .def_prop_rw("is_k_full", [](const MoeProblem& p) { return p.scheme.is_k_full; },
                   [](MoeProblem& p, bool v) { p.scheme.is_k_full = v; })
      .def_prop_rw("dtype", [](const MoeProblem& p) { return std::string(to_string(p.scheme.act)); },
                   [](MoeProblem& p, const std::string& v) { p.scheme.act = parse_dtype(nul_escaped(v)); })
      .def_prop_rw("routing", [](const MoeProblem& p) { return std::string(to_string(p.routing.kind)); },
                   [](MoeProblem& p, const std::string& v) { p.routing.kind = parse_name("routing", v, kRoutings); })
      .def_prop_rw("renormalize", [](const MoeProblem& p) { return p.routing.renormalize; },
                   [](MoeProblem& p, bool v) { p.routing.renormalize = v; })
      .def_prop_rw("zipf_exponent", [](const MoeProblem& p) { return p.routing.zipf_exponent; },
                   [](MoeProblem& p, double v) { p.routing.zipf_exponent = v; })
      .def_prop_rw("empty_experts", [](const MoeProblem& p) { return p.routing.empty_experts; },
                   [](MoeProblem& p, I64 v) { p.routing.empty_experts = field("empty_experts", v); })
      .def_prop_rw("expert_map", [](const MoeProblem& p) { return p.expert_map; },
                   [](MoeProblem& p, const std::vector<PythonInt<std::int32_t>>& v) { p.expert_map = map_field(v); })
      .def_prop_rw("tier", [](const MoeProblem& p) { return std::string(to_string(p.tier)); },
                   [](MoeProblem& p, const std::string& v) { p.tier = parse_name("tier", v, kTiers); })
      .def_prop_rw("seed", [](const MoeProblem& p) { return p.seed; },
                   [](MoeProblem& p, PythonInt<std::uint64_t> v) { p.seed = field("seed", v); })
      .def_prop_rw("k_shards", [](const MoeProblem& p) { return p.k_shards; },
                   [](MoeProblem& p, I64 v) { p.k_shards = field("k_shards", v); })
      .def_prop_rw("k_shard_rank", [](const MoeProblem& p) { return p.k_shard_rank; },
                   [](MoeProblem& p, I64 v) { p.k_shard_rank = field("k_shard_rank", v); })
      .def_prop_ro("scheme", [](const MoeProblem& p) { return p.scheme.name(); })
      .def_prop_ro("local_experts", &MoeProblem::local_experts)
      .def_prop_ro("gemm_shape", [](const MoeProblem& p) {
        const GemmShape s = p.gemm();
        return nb::make_tuple(s.m, s.n, s.k);
      }, "(m, n, k) of the GEMM a gemm1/gemm2 problem checks (m = rows of A)")
      .def("validate", &MoeProblem::validate, "Raises ValueError naming the parameter when the problem cannot exist")
      .def_prop_ro("name", &MoeProblem::name)
      // Equal when every field is (compared with anything else: NotImplemented, so False). No
      // __hash__: a Problem has setters, and Python's data model wants a mutable object with value
      // equality unhashable; a hash by value would change under a dict or set that holds it.
      .def("__eq__", [](const MoeProblem& a, const MoeProblem& b) { return same_problem(a, b); }, nb::is_operator())
      .def("__ne__", [](const MoeProblem& a, const MoeProblem& b) { return !same_problem(a, b); }, nb::is_operator())
      .def("__repr__", [](const MoeProblem& p) { return "<moeval.Problem " + p.name() + ">"; })
      .attr("__hash__") = nb::none();

  nb::class_<reference::NumericsContract>(m, "Contract",
                                          "Where a kernel rounds: dequant recipe, routing-weight point, determinism.")
      .def(
          "__init__",
          [](reference::NumericsContract* self, const std::string& dequant, const std::string& routing_weight,
             const std::string& determinism) {
            reference::NumericsContract c;
            c.dequant = parse_dequant_recipe(nul_escaped(dequant));
            c.routing_weight = reference::parse_routing_weight_point(nul_escaped(routing_weight));
            c.determinism = reference::parse_determinism(nul_escaped(determinism));
            new (self) reference::NumericsContract(c);
          },
          nb::kw_only(), nb::arg("dequant") = "sub_then_mul", nb::arg("routing_weight") = "in_fp32_sum",
          nb::arg("determinism") = "required")
      .def_static("parse", [](const std::string& text) { return reference::NumericsContract::parse(nul_escaped(text)); },
                  nb::arg("text"))
      .def_prop_ro("dequant", [](const reference::NumericsContract& c) { return std::string(to_string(c.dequant)); })
      .def_prop_ro("routing_weight", [](const reference::NumericsContract& c) { return std::string(to_string(c.routing_weight)); })
      .def_prop_ro("determinism", [](const reference::NumericsContract& c) { return std::string(to_string(c.determinism)); })
      .def_prop_ro("name", &reference::NumericsContract::name)
      // Equal contracts hash alike (by their canonical name, a function of the three fields), so a
      // Contract can key a dict or sit in a set; compared with anything else it is unequal (the
      // operator form returns NotImplemented there, where a plain __eq__ raised TypeError).
      .def(nb::self == nb::self)
      .def(nb::self != nb::self)
      .def("__hash__", [](const reference::NumericsContract& c) { return std::hash<std::string>{}(c.name()); })
      .def("__repr__", [](const reference::NumericsContract& c) { return "<moeval.Contract " + c.name() + ">"; });

  m.def("matrix", [](const std::string& name) { return testbed::gemm_matrix(nul_escaped(name)); }, nb::arg("name"),
        "The GEMM problems of a named matrix (matrix_names()).");
  m.def("matrix_names", &testbed::gemm_matrix_names);
}

}  // namespace moeval::python
