// Fuzz target: problem descriptions, as text and as raw parameters.
//   first byte even: the rest is text, "key=value" per line (a case's attributes as a file holds
//     them; "expert_map=0,-1,1" is the expert_map dataset), decoded with decode_problem — the
//     problem validated as the fixtures validate it;
//   first byte odd: the rest fills a MoeProblem field by field, then validate().
// Contract: InvalidProblem / GoldenError / std::invalid_argument (enum names) or success; a
// problem that validates and is small is then built, referenced, encoded and decoded back, and
// must come back with the same name.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "moeval/fixtures/cases.h"
#include "moeval/fixtures/errors.h"
#include "moeval/golden/case_codec.h"
#include "moeval/golden/corpus.h"
#include "moeval/golden/errors.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/reference/layer_reference.h"

namespace {

using moeval::MoeProblem;

moeval::golden::CaseRecord record_from_text(const std::string& text) {
  moeval::golden::CaseRecord record;
  record.name = "fuzz";
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "expert_map") {
      std::vector<std::int32_t> map;
      for (std::size_t p = 0; p <= value.size() && map.size() < 4096;) {
        const std::size_t comma = std::min(value.find(',', p), value.size());
        map.push_back(std::int32_t(std::strtol(value.substr(p, comma - p).c_str(), nullptr, 10)));
        p = comma + 1;
      }
      record.datasets["expert_map"] =
          moeval::golden::Dataset{moeval::golden::make_array<std::int32_t>({std::int64_t(map.size())}, map)};
      continue;
    }
    char* stop = nullptr;
    const long long i = std::strtoll(value.c_str(), &stop, 10);
    if (!value.empty() && *stop == '\0') {
      record.attributes[key] = std::int64_t(i);
      continue;
    }
    const double d = std::strtod(value.c_str(), &stop);
    if (!value.empty() && *stop == '\0') {
      record.attributes[key] = d;
    } else {
      record.attributes[key] = value;
    }
  }
  return record;
}

MoeProblem problem_from_bytes(FuzzedDataProvider& in) {
  MoeProblem p;
  p.kind = moeval::ProblemKind(in.ConsumeIntegralInRange<int>(0, 2));
  p.experts = in.ConsumeIntegralInRange<std::int64_t>(-2, 600);
  p.tokens = in.ConsumeIntegralInRange<std::int64_t>(-2, 64);
  p.topk = in.ConsumeIntegralInRange<std::int64_t>(-1, 10);
  p.hidden = in.ConsumeIntegralInRange<std::int64_t>(-1, 300);
  p.inter = in.ConsumeIntegralInRange<std::int64_t>(-1, 300);
  p.scheme.type = moeval::WeightType(in.ConsumeIntegralInRange<int>(0, 3));
  const int groups[] = {-1, 32, 64, 128, 0, 16, 48, -2};
  p.scheme.group_size = groups[in.ConsumeIntegralInRange<int>(0, 7)];
  p.scheme.act_order = in.ConsumeBool();
  p.scheme.is_k_full = in.ConsumeBool();
  p.scheme.act = in.ConsumeBool() ? moeval::DType::f16 : moeval::DType::bf16;
  p.routing.kind = moeval::RoutingKind(in.ConsumeIntegralInRange<int>(0, 4));
  p.routing.renormalize = in.ConsumeBool();
  p.routing.zipf_exponent = in.ConsumeFloatingPointInRange<double>(-1.0, 4.0);
  p.routing.empty_experts = in.ConsumeIntegralInRange<std::int64_t>(-1, 600);
  p.tier = in.ConsumeBool() ? moeval::Tier::exact : moeval::Tier::bounded;
  p.seed = in.ConsumeIntegral<std::uint64_t>();
  if (in.ConsumeBool() && p.experts > 0) {
    for (std::int64_t e = 0; e < p.experts; ++e) p.expert_map.push_back(in.ConsumeIntegralInRange<std::int32_t>(-2, 20));
  }
  return p;
}

// Small enough to build, reference, encode and decode in about a millisecond, so the fuzzer keeps
// its pace once it has learnt to write valid problems (larger ones are the unit tests' business).
bool small(const MoeProblem& p) {
  return p.experts <= 64 && p.tokens <= 8 && p.hidden <= 128 && p.inter <= 128 &&
         p.local_experts() * p.hidden * p.inter <= 8 * 64 * 64;
}

void round_trip(const MoeProblem& p) {
  const std::string name = p.name();
  const std::filesystem::path file = "fuzz.h5";
  if (p.kind == moeval::ProblemKind::layer) {
    const moeval::LayerCase c = moeval::build_layer_case(p);
    const auto expected = moeval::reference::layer_reference(c);
    const auto record = moeval::golden::encode_layer_case(c, expected, {});
    if (moeval::golden::decode_layer_case(record, file).layer.problem.name() != name) std::abort();
  } else {
    const moeval::GemmCase c = moeval::build_gemm_case(p);
    const auto expected = moeval::reference::reference_gemm(c);
    const auto record = moeval::golden::encode_gemm_case(c, expected, {});
    if (moeval::golden::decode_gemm_case(record, file).gemm.problem.name() != name) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  MoeProblem problem;
  if (data[0] % 2 == 0) {
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
      (void)moeval::parse_weight_type(text.substr(0, text.find('\n')));
    } catch (const moeval::InvalidProblem&) {
    }
    try {
      (void)moeval::golden::parse_family(text.substr(0, text.find('\n')));
    } catch (const std::invalid_argument&) {
    }
    try {
      problem = moeval::golden::decode_problem(record_from_text(text), "problem.txt");
    } catch (const moeval::golden::GoldenError&) {
      return 0;
    }
    problem.validate();  // decode_problem validated it: must not throw now
  } else {
    FuzzedDataProvider in(data + 1, size - 1);
    problem = problem_from_bytes(in);
    try {
      problem.validate();
    } catch (const moeval::InvalidProblem&) {
      return 0;
    }
  }
  if (small(problem)) round_trip(problem);
  return 0;
}
