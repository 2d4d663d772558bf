#include "problem_attributes.h"

#include <initializer_list>

#include "moeval/fixtures/errors.h"

namespace moeval::golden {
namespace {

// Parses an enum by its to_string() name, listing the allowed names when it is not one of them.
template <class E>
E parse_enum(const RecordFields& fields, const std::string& attr, std::initializer_list<E> values) {
  const std::string text = fields.text(attr);
  std::string allowed;
  for (E v : values) {
    if (to_string(v) == text) return v;
    allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(v));
  }
  throw fields.error("attribute " + attr, "'" + text + "' is unknown; allowed: " + allowed);
}

// An integer attribute that older files lack (then `fallback`); a present one must be an integer.
std::int64_t optional_integer(const RecordFields& fields, const std::string& attr, std::int64_t fallback) {
  try {
    fields.attribute(attr);  // throws only when the attribute is missing
  } catch (const GoldenError&) {
    return fallback;
  }
  return fields.integer(attr);
}

}  // namespace

void put_problem(CaseRecord& r, const MoeProblem& p) {
  auto& a = r.attributes;
  a["kind"] = std::string(to_string(p.kind));
  a["experts"] = p.experts;
  a["tokens"] = p.tokens;
  a["topk"] = p.topk;
  a["hidden"] = p.hidden;
  a["inter"] = p.inter;
  a["weight_type"] = std::string(to_string(p.scheme.type));
  a["group_size"] = std::int64_t(p.scheme.group_size);
  a["act_order"] = std::int64_t(p.scheme.act_order);
  a["is_k_full"] = std::int64_t(p.scheme.is_k_full);
  a["act_dtype"] = std::string(to_string(p.scheme.act));
  a["routing_kind"] = std::string(to_string(p.routing.kind));
  a["routing_renormalize"] = std::int64_t(p.routing.renormalize);
  a["routing_zipf_exponent"] = p.routing.zipf_exponent;
  a["routing_empty_experts"] = p.routing.empty_experts;
  a["tier"] = std::string(to_string(p.tier));
  // Seeds are small in the corpus; the bits of a uint64 survive the int64 round trip anyway.
  a["seed"] = std::int64_t(p.seed);
  a["problem_name"] = p.name();
  // Written only for a K shard, so files and cases from before the attributes existed stay identical.
  if (p.k_shards > 1) {
    a["k_shards"] = p.k_shards;
    a["k_shard_rank"] = p.k_shard_rank;
  }
  if (!p.expert_map.empty()) {
    r.datasets["expert_map"] = Dataset{make_array<std::int32_t>({p.experts}, p.expert_map)};
  }
}

MoeProblem get_problem(const RecordFields& f) {
  MoeProblem p;
  p.kind = parse_enum(f, "kind", {ProblemKind::gemm1, ProblemKind::gemm2, ProblemKind::layer});
  p.experts = f.integer("experts");
  p.tokens = f.integer("tokens");
  p.topk = f.integer("topk");
  p.hidden = f.integer("hidden");
  p.inter = f.integer("inter");
  p.scheme.type =
      parse_enum(f, "weight_type", {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8});
  p.scheme.group_size = int(f.integer("group_size"));
  p.scheme.act_order = f.flag("act_order");
  p.scheme.is_k_full = f.flag("is_k_full");
  p.scheme.act = parse_enum(f, "act_dtype", {DType::f16, DType::bf16});
  p.routing.kind = parse_enum(f, "routing_kind",
                              {RoutingKind::softmax_topk, RoutingKind::uniform, RoutingKind::zipf,
                               RoutingKind::all_to_one, RoutingKind::empty_experts});
  p.routing.renormalize = f.flag("routing_renormalize");
  p.routing.zipf_exponent = f.real("routing_zipf_exponent");
  p.routing.empty_experts = f.integer("routing_empty_experts");
  p.tier = parse_enum(f, "tier", {Tier::exact, Tier::bounded});
  p.seed = std::uint64_t(f.integer("seed"));
  p.k_shards = optional_integer(f, "k_shards", 1);
  p.k_shard_rank = optional_integer(f, "k_shard_rank", 0);
  if (f.has("expert_map")) {
    if (p.experts < 1) throw f.error("attribute experts", "must be at least 1");
    p.expert_map = f.array<std::int32_t>("expert_map", {p.experts});
  }
  try {
    p.validate();
  } catch (const InvalidProblem& e) {
    throw f.error("problem", std::string("is not a valid problem: ") + e.what());
  }
  if (p.name() != f.text("problem_name")) {
    throw f.error("attribute problem_name", "'" + f.text("problem_name") +
                                                "' does not match the attributes, which "
                                                "describe '" +
                                                p.name() + "'");
  }
  return p;
}

}  // namespace moeval::golden
