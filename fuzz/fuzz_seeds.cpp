// Writes the seed corpora of the fuzz targets into DIR/{golden_file,case_loader,problem}: small
// valid files in the golden schema (two GEMM cases, one layer case, one GEMM case with an expert
// map) and each case's attributes as problem text. Usage: fuzz_seeds DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <variant>

#include "moeval/golden/case_codec.h"
#include "moeval/golden/corpus.h"
#include "moeval/golden/golden_file.h"
#include "moeval/golden/schema.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/reference/layer_reference.h"

namespace fs = std::filesystem;
using namespace moeval;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  for (const char* sub : {"golden_file", "case_loader", "problem"}) fs::create_directories(dir / sub);

  std::vector<golden::CaseRecord> records;
  const auto wna16 = golden::corpus(golden::Family::wna16);
  for (const MoeProblem& p : {wna16[0], wna16[33], wna16.back()}) {  // a scheme case, an exact case, EP
    if (p.local_experts() * p.hidden * p.inter > 64 * 64 * 64) continue;
    const GemmCase c = build_gemm_case(p);
    records.push_back(golden::encode_gemm_case(c, reference::reference_gemm(c), golden::family_layouts(golden::Family::wna16)));
  }
  // Tiny cases first: a few KB each, so a fuzz input is parsed in a millisecond or two.
  for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
    MoeProblem p;
    p.kind = kind;
    p.experts = 2;
    p.tokens = 2;
    p.topk = 1;
    p.hidden = 32;
    p.inter = 32;
    p.scheme = QuantScheme{kind == ProblemKind::gemm1 ? WeightType::uint4b8 : WeightType::uint8, 32, false, true,
                           DType::f16};
    p.seed = 7;
    const GemmCase c = build_gemm_case(p);
    records.push_back(golden::encode_gemm_case(c, reference::reference_gemm(c), {}));
  }
  const MoeProblem layer = golden::corpus(golden::Family::layer).front();
  const LayerCase lc = build_layer_case(layer);
  records.push_back(golden::encode_layer_case(lc, reference::layer_reference(lc), golden::family_layouts(golden::Family::layer)));

  int files = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    for (const char* sub : {"golden_file", "case_loader"}) {
      golden::write_golden_file(dir / sub / ("seed" + std::to_string(i) + ".h5"), golden::current_provenance(), "wna16",
                                {records[i]});
      ++files;
    }
    std::ofstream text(dir / "problem" / ("seed" + std::to_string(i) + ".txt"), std::ios::binary);
    text << '0';  // even first byte: the text mode of problem_fuzz
    for (const auto& [key, value] : records[i].attributes) {
      text << key << '=';
      std::visit([&](const auto& v) { text << v; }, value);
      text << '\n';
    }
    if (records[i].datasets.count("expert_map")) {
      const auto& map = std::get<std::vector<std::int32_t>>(records[i].datasets.at("expert_map").array.data);
      text << "expert_map=";
      for (std::size_t e = 0; e < map.size(); ++e) text << (e ? "," : "") << map[e];
      text << '\n';
    }
    ++files;
  }
  golden::write_golden_file(dir / "golden_file" / "all.h5", golden::current_provenance(), "wna16", records);
  std::ofstream(dir / "problem" / "raw1.bin", std::ios::binary) << "1\x05\x10\x03\x40\x20\x01\x02";
  std::printf("fuzz_seeds: %d seed files in %s\n", files + 2, dir.c_str());
  return 0;
}
