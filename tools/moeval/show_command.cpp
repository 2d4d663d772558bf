// `moeval show FILE [--case NAME]`: what a reproduce file or golden family file holds, readably:
// where it came from, and per case the problem (decoded and validated as `check --repro` would)
// and every dataset with its shape and element type. Needs no GPU.
#include <cstdio>
#include <string>
#include <variant>

#include "commands.h"
#include "exit_codes.h"
#include "plural.h"
#include "validators.h"
#include "moeval/golden/case_codec.h"
#include "moeval/golden/errors.h"
#include "moeval/golden/golden_file.h"

namespace moeval::cli {
namespace {

struct ShowOptions {
  std::string file;
  std::string case_name;  // empty: every case
};

std::string attribute_text(const golden::AttrValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    return buf;
  }
  return std::get<std::string>(v);
}

std::string shape_text(const golden::Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void show_case(const golden::GoldenReader& reader, const std::string& name) {
  const golden::CaseRecord record = reader.read_case(name);
  std::printf("\ncase %s\n", name.c_str());
  const MoeProblem p = golden::decode_problem(record, reader.path());
  std::printf("  problem: %s, E %lld%s, M %lld, topk %lld, H %lld, I %lld, scheme %s, routing %s, tier %s, seed %llu",
              std::string(to_string(p.kind)).c_str(), static_cast<long long>(p.experts),
              p.expert_map.empty() ? "" : (" (" + std::to_string(p.local_experts()) + " local)").c_str(),
              static_cast<long long>(p.tokens), static_cast<long long>(p.topk), static_cast<long long>(p.hidden),
              static_cast<long long>(p.inter), p.scheme.name().c_str(), std::string(to_string(p.routing.kind)).c_str(),
              std::string(to_string(p.tier)).c_str(), static_cast<unsigned long long>(p.seed));
  if (p.k_shards > 1) std::printf(", K shard %lld of %lld", static_cast<long long>(p.k_shard_rank), static_cast<long long>(p.k_shards));
  std::printf("\n  attributes:");
  for (const auto& [key, value] : record.attributes) std::printf(" %s=%s", key.c_str(), attribute_text(value).c_str());
  std::printf("\n  datasets:\n");
  for (const auto& [path, dataset] : record.datasets) {
    const golden::Array& a = dataset.array;
    std::printf("    %-40s %-14s %s%s\n", path.c_str(), shape_text(a.shape).c_str(), std::string(golden::to_string(a.type())).c_str(),
                a.float16 ? (" (" + std::string(to_string(*a.float16)) + " bits)").c_str() : "");
  }
}

int run_show(const ShowOptions& o) {
  const golden::GoldenReader reader(o.file);
  if (!o.case_name.empty() && !reader.has_case(o.case_name)) {
    throw UsageError("--case: '" + o.case_name + "' is not a case of " + o.file + " (" +
                     count_of(long(reader.case_names().size()), "case") + "; `moeval show " + o.file + "` lists them)");
  }
  const golden::Provenance& prov = reader.provenance();
  std::printf("%s: %s file (family '%s'), schema %lld, written by %s at commit %s on %s, reference %s; %s\n", o.file.c_str(),
              reader.family() == "repro" ? "reproduce" : "golden", reader.family().c_str(),
              static_cast<long long>(prov.schema_version), prov.generator_version.c_str(), prov.git_commit.c_str(),
              prov.date.c_str(), prov.reference_backend.c_str(), count_of(long(reader.case_names().size()), "case").c_str());
  if (!o.case_name.empty()) {
    show_case(reader, o.case_name);
    return kPass;
  }
  for (const std::string& name : reader.case_names()) show_case(reader, name);
  if (reader.family() == "repro") std::printf("\nreplay: moeval check --repro %s\n", o.file.c_str());
  return kPass;
}

}  // namespace

Runner add_show_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("show", "Print what a reproduce file or golden family file holds (no GPU needed)");
  auto o = std::make_shared<ShowOptions>();
  cmd->add_option("file", o->file, "A reproduce file (moeval-repro/*.h5) or a golden family file")
      ->required()
      ->check(not_empty("a reproduce or golden file"))
      ->check(CLI::ExistingFile);
  cmd->add_option("--case", o->case_name, "Only this case")->check(not_empty("a case name"));
  return [o] { return run_show(*o); };
}

}  // namespace moeval::cli
