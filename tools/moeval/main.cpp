// `moeval`: check | golden | sweep | bench | report | show. Exit codes: exit_codes.h (0 pass, 1 check failed,
// 2 usage or input error, 3 nothing could run).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "build_info.h"
#include "commands.h"
#include "exit_codes.h"
#include "moeval/golden/atomic_write.h"
#include "moeval/golden/errors.h"

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// CLI11 would answer a mistyped subcommand with "A subcommand is required" or "not expected";
// name the word, the subcommands, and the nearest one. `command` is "moeval" or "moeval report".
void print_unknown_subcommand(const std::string& command, const std::string& word, const std::vector<std::string>& names) {
  std::string list, nearest;
  std::size_t best = 3;  // suggest only within two edits
  for (const std::string& name : names) {
    list += (list.empty() ? "" : ", ") + name;
    if (const std::size_t d = edit_distance(word, name); d < best) best = d, nearest = name;
  }
  const std::string hint = nearest.empty() ? "" : " (did you mean '" + nearest + "'?)";
  std::fprintf(stderr, "%s: unknown subcommand '%s'%s; subcommands: %s (%s --help)\n", command.c_str(), word.c_str(),
               hint.c_str(), list.c_str(), command.c_str());
}

// The first word that is not an option, at the top level or below a subcommand that has its own
// subcommands (`moeval report mrge`), when it names none of them.
bool unknown_subcommand(int argc, char** argv, const CLI::App& app) {
  const CLI::App* level = &app;
  std::string command = "moeval";
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    std::vector<std::string> names;
    for (const CLI::App* sub : level->get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (names.empty()) return false;  // a positional argument of a subcommand (`show FILE`)
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : level->get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == argv[i]) next = sub;
    }
    if (!next) {
      std::sort(names.begin(), names.end());
      print_unknown_subcommand(command, argv[i], names);
      return true;
    }
    level = next;
    command += " " + next->get_name();
  }
  return false;
}

std::string& invocation_text() {
  static std::string text;
  return text;
}

}  // namespace

namespace moeval::cli {

void set_invocation(int argc, char** argv) {
  std::string& s = invocation_text();
  s.clear();
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
}

const std::string& invocation() { return invocation_text(); }

}  // namespace moeval::cli

int main(int argc, char** argv) {
  // Line-buffered stdout: each PASS/FAIL line reaches a pipe or file when it is printed, so a run
  // that is killed (or crashes) keeps every line it had printed.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  moeval::cli::set_invocation(argc, argv);
  // An interrupted golden update or JSON report removes its "<file>.tmp.<pid>" before dying.
  moeval::golden::install_temp_cleanup();

  CLI::App app{"moeval: proves quantized Mixture-of-Experts kernels right"};
  app.require_subcommand(1);
  app.set_version_flag("--version", moeval::cli::version_text());
  app.footer(
      "Exit codes: 0 pass, 1 a check failed, 2 usage or input/output error, 3 nothing could run, or not everything "
      "required (no usable GPU; a merge of shards that did not all finish). docs/errors.md has the details.");
  std::map<std::string, moeval::cli::Runner> runners{
      {"check", moeval::cli::add_check_command(app)},
      {"golden", moeval::cli::add_golden_command(app)},
      {"sweep", moeval::cli::add_sweep_command(app)},
      {"bench", moeval::cli::add_bench_command(app)},
      {"report", moeval::cli::add_report_command(app)},
      {"show", moeval::cli::add_show_command(app)},
  };
  if (unknown_subcommand(argc, argv, app)) return moeval::cli::kUsageError;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0 through here; every parse error is a usage error.
    return app.exit(e) == 0 ? moeval::cli::kPass : moeval::cli::kUsageError;
  }
  const std::string name = app.get_subcommands().front()->get_name();
  try {
    return runners.at(name)();
  } catch (const moeval::cli::NothingRan& e) {
    std::fprintf(stderr, "moeval %s: nothing could run: %s\n", name.c_str(), e.what());
    return moeval::cli::kNothingRan;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "moeval %s: error: out of host memory\n", name.c_str());
    return moeval::cli::kUsageError;
  } catch (const std::exception& e) {
    // UsageError, invalid_argument (bad values), GoldenError (unreadable or unwritable files).
    std::fprintf(stderr, "moeval %s: error: %s\n", name.c_str(), e.what());
    return moeval::cli::kUsageError;
  }
}
