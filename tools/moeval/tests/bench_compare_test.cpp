// moeval bench --compare on the committed H200 bench runs: every common cell and timed path gets
// the ratio of the two files' own numbers, and a file that is not a bench report is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <utility>

#include "bench_compare.h"
#include "exit_codes.h"

namespace moeval::cli {
namespace {

nlohmann::json load(const char* name) {
  std::ifstream in(std::string(MOEVAL_RESULTS_DIR) + "/" + name);
  return nlohmann::json::parse(in);
}

TEST(BenchCompare, EveryCommonCellGetsTheRatioOfTheTwoRuns) {
  const auto a = load("bench-h200-2026-11-29.json");
  const auto b = load("bench-h200-2026-11-30.json");
  const std::string text = compare_bench(a, b, "A.json", "B.json");
  std::size_t lines = 0;
  for (const auto& ca : a["cells"]) {
    for (const auto& cb : b["cells"]) {
      if (ca["shape"] != cb["shape"] || ca["tokens"] != cb["tokens"]) continue;
      for (const char* path : kBenchTimes) {
        if (!ca.contains(path) || !cb.contains(path)) continue;
        char expected[64];
        std::snprintf(expected, sizeof expected, "%10.1f %10.1f %7.3f", ca[path].get<double>() * 1e6,
                      cb[path].get<double>() * 1e6, cb[path].get<double>() / ca[path].get<double>());
        EXPECT_NE(text.find(expected), std::string::npos) << ca["shape"] << " M " << ca["tokens"] << " " << path;
        ++lines;
      }
    }
  }
  EXPECT_GE(lines, 24u * 2) << "both runs time wna16 and the cuBLAS path on 24 cells";
  EXPECT_NE(text.find("geometric mean B/A ours_gemm_s"), std::string::npos) << text;
  EXPECT_EQ(text.find("only in"), std::string::npos) << "the two runs have the same cells";
}

TEST(BenchCompare, CellsOfOneRunOnlyAreListed) {
  auto a = load("bench-h200-2026-11-30.json");
  auto b = a;
  b["cells"].erase(0);
  const std::string text = compare_bench(a, b, "A.json", "B.json");
  EXPECT_NE(text.find(a["cells"][0]["shape"].get<std::string>() + " M=" + a["cells"][0]["tokens"].dump() + ": only in A"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("geometric mean B/A ours_gemm_s                  1.000"), std::string::npos) << text;
}

TEST(BenchCompare, NotABenchReportIsRefused) {
  try {
    compare_bench(nlohmann::json{{"checks", 1}}, load("bench-h200-2026-11-30.json"), "report.json", "B.json");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--compare: 'report.json' is not a `moeval bench --json` report (no \"cells\" array)");
  }
}

// "device" and "l2_flush" of another type than a string were nlohmann's type_error.302, naming no
// file; they are refused naming the file and the field.
TEST(BenchCompare, AMistypedTopLevelFieldIsRefusedNamingTheFile) {
  const auto good = load("bench-h200-2026-11-30.json");
  for (const auto& [key, value] : {std::pair<const char*, nlohmann::json>{"device", 5}, {"l2_flush", 1}}) {
    auto bad = good;
    bad[key] = value;
    try {
      compare_bench(good, bad, "A.json", "B.json");
      FAIL() << key << " accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "--compare: 'B.json': \"" + std::string(key) + "\" is " + value.dump() + "; allowed: a string");
    }
  }
}

// A report without "l2_flush" predates the option (flushed dirty); runs flushed differently are
// compared, but the text says so, since decode cells move by that alone.
TEST(BenchCompare, DifferentL2FlushesAreNamed) {
  const auto dirty = load("bench-h200-2026-11-30.json");
  auto clean = dirty;
  clean["l2_flush"] = "clean";
  EXPECT_NE(compare_bench(dirty, clean, "A.json", "B.json")
                .find("note: A was timed after a dirty L2 flush and B after a clean one"),
            std::string::npos);
  EXPECT_EQ(compare_bench(clean, clean, "A.json", "B.json").find("note:"), std::string::npos);
  EXPECT_EQ(compare_bench(dirty, dirty, "A.json", "B.json").find("note:"), std::string::npos);
}

// An A/B's forced options ("options", written since the twenty-fifth session) are named where they
// differ or only one report has them, and only those.
TEST(BenchCompare, DifferentOptionsAreNamed) {
  auto a = load("bench-h200-2026-11-30.json");
  a["options"] = {{"marlin_split_last_round", true}, {"block_size", 0}};
  auto b = a;
  b["options"]["marlin_split_last_round"] = false;
  const std::string text = compare_bench(a, b, "A.json", "B.json");
  EXPECT_NE(text.find("options: marlin_split_last_round A = true, B = false\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("options: block_size"), std::string::npos) << text;
  EXPECT_EQ(compare_bench(a, a, "A.json", "B.json").find("options:"), std::string::npos);
  // An option one report lacks (written by an older or newer CLI) is named too.
  b["options"].erase("block_size");
  b["options"]["seed"] = 2;
  const std::string one_sided = compare_bench(a, b, "A.json", "B.json");
  EXPECT_NE(one_sided.find("options: block_size A = 0, not in B\n"), std::string::npos) << one_sided;
  EXPECT_NE(one_sided.find("options: seed not in A, B = 2\n"), std::string::npos) << one_sided;
}

}  // namespace
}  // namespace moeval::cli
