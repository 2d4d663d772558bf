// docs/errors.md, row by row. The table is the specification: for a CLI row its "bad input"
// column is the command that is run (as a subprocess, output 2>&1), and the printed output must
// contain the row's message and the process must exit with the row's exit code; for a library row
// the trigger below makes the call and its exception message must contain the row's message.
// Every documented row has a trigger here and every trigger a documented row.
//
// Placeholders in commands and messages: {dir} a fresh temp directory per row, {golden} the
// committed golden data, {regressions} the fuzzers' saved inputs (fuzz/regressions), {full} a
// 64 KiB tmpfs (full disk), {ro} a read-only tmpfs. The last two need root (mount in a private
// mount namespace); elsewhere those rows report Skipped.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <hdf5.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/fixtures/errors.h"
#include "moeval/golden/case_codec.h"
#include "moeval/golden/golden_file.h"
#include "moeval/golden/h5.h"
#include "moeval/golden/schema.h"
#include "moeval/kernels/marlin_moe.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/wna16_moe.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/devices.h"
#include "job_runner.h"
#include "matrices.h"
#include "report_dir.h"
#include "run_header.h"
#include "shard.h"
#include "signalled_run.h"

#if MOEVAL_CATALOGUE_GPU
#include <cuda_runtime.h>
#endif

namespace moeval::cli {
namespace {

namespace fs = std::filesystem;

struct DocRow {
  std::string id, input, exit, message;
};

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '`')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '`')) ++i;
  return s.substr(i);
}

// Rows "| id | bad input | exit | message |" of every table whose first cell is an id.
std::map<std::string, DocRow> read_doc() {
  std::ifstream in(MOEVAL_ERRORS_DOC);
  std::map<std::string, DocRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::size_t start = 1;
    for (std::size_t bar = line.find(" | ", start); bar != std::string::npos; bar = line.find(" | ", start)) {
      cells.push_back(trim(line.substr(start, bar - start)));
      start = bar + 3;
    }
    cells.push_back(trim(line.substr(start, line.size() - start - (line.back() == '|' ? 1 : 0))));
    if (cells.size() != 4 || cells[0] == "id" || cells[0].find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
      continue;
    rows[cells[0]] = DocRow{cells[0], cells[1], cells[2], cells[3]};
  }
  return rows;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

struct Env {
  fs::path dir;
  std::string substitute(std::string s) const {
    s = replace_all(s, "{dir}", dir.string());
    s = replace_all(s, "{golden}", MOEVAL_GOLDEN_DATA);
    s = replace_all(s, "{regressions}", MOEVAL_FUZZ_REGRESSIONS);
    s = replace_all(s, "{full}", (dir / "full").string());
    s = replace_all(s, "{ro}", (dir / "ro").string());
    return s;
  }
};

// ---- inputs the rows need -------------------------------------------------------------------

MoeProblem small_problem() {
  MoeProblem p;
  p.kind = ProblemKind::gemm2;
  p.experts = 8;
  p.tokens = 5;
  p.topk = 2;
  p.hidden = 128;
  p.inter = 64;
  p.scheme.type = WeightType::uint4;
  p.scheme.group_size = 32;
  p.scheme.act = DType::bf16;
  p.seed = 21;
  return p;
}

golden::CaseRecord small_record() {
  const GemmCase c = build_gemm_case(small_problem());
  return golden::encode_gemm_case(c, reference::reference_gemm(c), {});
}

void write_repro(const fs::path& path, const std::function<void(golden::CaseRecord&)>& change) {
  golden::CaseRecord r = small_record();
  change(r);
  golden::write_golden_file(path, golden::current_provenance(), "repro", {r});
}

template <class T>
std::vector<T>& values(golden::CaseRecord& r, const std::string& path) {
  return std::get<std::vector<T>>(r.datasets.at(path).array.data);
}

void copy_truncated(const fs::path& from, const fs::path& to, std::uintmax_t bytes) {
  fs::copy_file(from, to);
  fs::resize_file(to, bytes);
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Host-only argument checks run before any CUDA call: aligned fake addresses are never touched.
// The fields both kernels' arguments share, at values their checks accept: E = 2, N = K = 64,
// group 32, 16-row blocks, 4 slots of top-2 routing.
template <typename Args>
Args valid_common_args() {
  alignas(16) static std::uint8_t storage[64];
  Args a;
  a.a = storage;
  a.c = storage;
  a.weights.scales = storage;
  a.weights.num_experts = 2;
  a.weights.group_size = 32;
  a.shape = {64, 64};
  a.blocks.block_size = 16;
  a.blocks.num_slots = 4;
  a.blocks.sorted_capacity = 64;
  a.top_k = 2;
  return a;
}

kernels::Wna16MoeArgs valid_wna16_args() {
  auto a = valid_common_args<kernels::Wna16MoeArgs>();
  a.weights.qweight = static_cast<const std::uint8_t*>(a.a);
  a.weights.bits = 4;
  return a;
}

std::string wna16_message(const std::function<void(kernels::Wna16MoeArgs&)>& change) {
  kernels::Wna16MoeArgs a = valid_wna16_args();
  change(a);
  return message_of([&] { kernels::wna16_moe(a); });
}

kernels::MarlinMoeArgs valid_marlin_args() {
  auto a = valid_common_args<kernels::MarlinMoeArgs>();
  a.weights.qweight = static_cast<const std::uint32_t*>(a.a);
  a.weights.type = kernels::MarlinWeightType::uint4b8;
  a.weights.num_groups = 2;
  return a;
}

std::string marlin_message(const std::function<void(kernels::MarlinMoeArgs&)>& change) {
  kernels::MarlinMoeArgs a = valid_marlin_args();
  change(a);
  return message_of([&] { kernels::marlin_moe(a); });
}

std::string problem_message(const std::function<void(MoeProblem&)>& change) {
  MoeProblem p = small_problem();
  change(p);
  return message_of([&] { p.validate(); });
}

// ---- report directories the merge rows read ---------------------------------------------------

std::vector<Job> matrix_jobs(MatrixName name) {
  MatrixOptions o;
  o.name = name;
  o.kernels = {"wna16_moe", "marlin_moe"};
  return build_jobs(o);
}

// A report directory of a selection of `selected` jobs: `records` written (every one SKIPPED),
// `in_shard` jobs in its shard; unfinished, it is what a killed run leaves (results.jsonl only).
void write_report(const fs::path& dir, std::size_t selected, const std::vector<Job>& records, std::size_t in_shard, Shard shard,
                  bool finished = true, const std::function<void(nlohmann::json&)>& change_header = {}) {
  RunDescription d;
  d.command = "moeval check";
  d.matrix = "quick";
  d.seeds = 1;
  d.shard = shard;
  d.jobs_selected = selected;
  d.jobs_in_shard = in_shard;
  nlohmann::json header = make_header(d);
  if (change_header) change_header(header);
  ReportDir out(dir, header);
  for (const Job& j : records) out.add(skipped_record(j, "no CUDA device"));
  if (finished) out.finish({{"end_time", utc_now()}, {"duration_s", 1.0}, {"interrupted", false}});
}

// The two shards of the quick matrix in `dir`/shard-I-of-2.
void write_quick_shards(const fs::path& dir, const std::function<void(int, nlohmann::json&)>& change_header = {}) {
  const auto all = matrix_jobs(MatrixName::quick);
  for (int i = 0; i < 2; ++i) {
    const Shard shard{i, 2, "--shard"};
    const auto mine = shard_jobs(all, shard);
    write_report(dir / ("shard-" + std::to_string(i) + "-of-2"), all.size(), mine, mine.size(), shard, true,
                 [&](nlohmann::json& h) {
                   if (change_header) change_header(i, h);
                 });
  }
}

// A finished single run of the quick matrix in `dir`, its report.json then changed.
void write_quick_run(const fs::path& dir, const std::function<void(nlohmann::json&)>& change_report = {}) {
  const auto all = matrix_jobs(MatrixName::quick);
  write_report(dir, all.size(), all, all.size(), Shard{});
  if (!change_report) return;
  nlohmann::json j;
  {
    std::ifstream in(dir / "report.json");
    j = nlohmann::json::parse(in);
  }
  change_report(j);
  std::ofstream(dir / "report.json", std::ios::trunc) << j.dump(2);
}

// ---- triggers -------------------------------------------------------------------------------

enum class Needs { nothing, no_gpu, root, gpu, two_gpus };

struct Trigger {
  Needs needs = Needs::nothing;
  std::function<void(const Env&)> setup;          // CLI rows: files the command reads
  std::function<std::string(const Env&)> library; // library rows: returns the exception message
};

const std::map<std::string, Trigger>& triggers() {
  static const std::map<std::string, Trigger> t = [] {
    std::map<std::string, Trigger> m;
    auto cli = [&](const char* id, Needs needs = Needs::nothing, std::function<void(const Env&)> setup = {}) {
      m[id] = Trigger{needs, std::move(setup), {}};
    };
    auto lib = [&](const char* id, std::function<std::string(const Env&)> f, Needs needs = Needs::nothing) {
      m[id] = Trigger{needs, {}, std::move(f)};
    };
    // Command line.
    for (const char* id : {"cli-no-subcommand", "cli-unknown-subcommand", "cli-unknown-report-subcommand",
                           "cli-unknown-option", "cli-version", "bench-shapes-all-with-others", "bench-shapes-twice",
                           "bench-shapes-trailing-comma", "bench-compare-with-json",
                           "check-device-empty-element", "check-device-comma-only", "check-out-empty", "check-json-empty",
                           "check-repro-with-filter", "golden-update-dir-empty",
                           "sweep-seeds-zero", "sweep-seeds-text", "bench-tokens-negative", "bench-tokens-zero", "bench-tokens-twice", "bench-warps-k-past-pairs",
                           "bench-repeats-zero", "bench-wgmma-warpgroups-four", "bench-block-size-unsupported", "bench-l2-flush-unknown", "bench-unknown-shape", "bench-device-negative", "check-device-negative",
                           "check-device-twice", "check-device-text", "check-require-gpu-cpu-only",
                           "golden-check-and-update", "golden-unknown-family", "golden-family-twice", "golden-unknown-case",
                           "golden-dir-missing", "golden-max-lines-negative", "check-repro-missing",
                           "check-repro-not-hdf5", "check-repro-layer-case", "check-repro-with-json"}) {
      cli(id);
    }
    // Selection, shards and report directories.
    for (const char* id : {"check-matrix-unknown", "check-filter-unknown-key", "check-filter-unknown-value",
                           "check-filter-selects-nothing", "check-shard-out-of-range", "check-out-not-a-directory",
                           "check-repro-dir-not-a-directory", "sweep-out-not-a-directory",
                           "report-merge-not-a-report", "report-merge-input-is-a-file", "show-not-hdf5", "bench-compare-not-json", "bench-compare-not-regular-file",
                           "check-json-is-report-file",
                           "check-golden-dir-missing"}) {
      cli(id);
    }
    cli("check-out-full-disk", Needs::root);
    cli("check-golden-file-corrupt", Needs::nothing, [](const Env& e) { std::ofstream(e.dir / "layer.h5") << "not hdf5\n"; });
    cli("check-golden-one-case-differs", Needs::nothing, [](const Env& e) {
      const golden::GoldenReader layer(fs::path(MOEVAL_GOLDEN_DATA) / "layer.h5");
      std::vector<golden::CaseRecord> cases = layer.read_all();
      values<std::uint16_t>(cases[2], "expected/out/y16")[0] ^= 1;
      golden::write_golden_file(e.dir / "layer.h5", layer.provenance(), "layer", cases);
    });
    cli("bench-compare-device-not-a-string", Needs::nothing,
        [](const Env& e) { std::ofstream(e.dir / "a.json") << R"({"device": 5, "cells": []})"; });
    cli("report-merge-report-and-shards", Needs::nothing, [](const Env& e) {
      write_quick_run(e.dir / "runs");
      write_quick_shards(e.dir / "runs");
    });
    cli("report-merge-two-builds", Needs::nothing, [](const Env& e) {
      write_quick_shards(e.dir / "runs", [](int shard, nlohmann::json& h) {
        h["moeval"] = {{"version", "0.1.0"}, {"commit", shard == 0 ? "aaaaaaaaaaaa" : "bbbbbbbbbbbb"}};
      });
    });
    cli("report-merge-out-inside-input", Needs::nothing, [](const Env& e) { write_quick_shards(e.dir / "runs"); });
    cli("report-merge-out-is-input", Needs::nothing, [](const Env& e) { write_quick_shards(e.dir / "runs"); });
    cli("report-merge-out-named-shard", Needs::nothing, [](const Env& e) { write_quick_shards(e.dir / "runs"); });
    cli("report-merge-report-of-another-run", Needs::nothing, [](const Env& e) {
      // A run whose report.json stayed beside the lines of a later run that was killed at its start.
      write_quick_run(e.dir / "run");
      const auto all = matrix_jobs(MatrixName::quick);
      write_report(e.dir / "later", all.size(), {}, all.size(), Shard{}, false,
                   [](nlohmann::json& h) { h["run"]["command"] = "moeval check --filter kind=golden"; });
      fs::copy_file(e.dir / "later" / "results.jsonl", e.dir / "run" / "results.jsonl", fs::copy_options::overwrite_existing);
    });
    cli("check-out-report-file-is-directory", Needs::nothing,
        [](const Env& e) { fs::create_directories(e.dir / "r" / "junit.xml" / "x"); });
    cli("report-merge-no-shard-field", Needs::nothing,
        [](const Env& e) { write_quick_run(e.dir / "run", [](nlohmann::json& j) { j["run"].erase("shard"); }); });
    cli("report-merge-shard-count-zero", Needs::nothing,
        [](const Env& e) { write_quick_run(e.dir / "run", [](nlohmann::json& j) { j["run"]["shard"]["count"] = 0; }); });
    cli("report-merge-check-not-an-object", Needs::nothing,
        [](const Env& e) { write_quick_run(e.dir / "run", [](nlohmann::json& j) { j["checks"][0] = nullptr; }); });
    cli("report-merge-report-is-directory", Needs::nothing,
        [](const Env& e) { fs::create_directories(e.dir / "run" / "report.json"); });
    cli("report-merge-check-twice", Needs::nothing, [](const Env& e) {
      const auto all = matrix_jobs(MatrixName::quick);
      write_report(e.dir / "run", all.size(), {all[0], all[0]}, all.size(), Shard{});
    });
    cli("report-merge-full-disk", Needs::root, [](const Env& e) {
      const auto all = matrix_jobs(MatrixName::standard);  // some 300 KB of lines: more than {full} holds
      write_report(e.dir / "run", all.size(), all, all.size(), Shard{});
    });
    cli("report-merge-not-run", Needs::nothing, [](const Env& e) {
      const auto all = matrix_jobs(MatrixName::quick);  // killed after its first two checks
      write_report(e.dir / "run", all.size(), {all[0], all[1]}, all.size(), Shard{}, false);
    });
    cli("golden-update-newer-schema", Needs::nothing, [](const Env& e) {
      golden::Provenance p = golden::current_provenance();
      p.schema_version = 99;
      golden::write_golden_file(e.dir / "layer.h5", p, "layer", {small_record()});
    });
    // Report paths.
    cli("json-missing-directory");
    cli("json-is-directory");
    cli("json-read-only", Needs::root);
    cli("json-full-device");
    cli("json-fifo-without-reader", Needs::nothing, [](const Env& e) { ::mkfifo((e.dir / "fifo").c_str(), 0600); });
    cli("json-symlink-loop", Needs::nothing, [](const Env& e) { fs::create_symlink("loop", e.dir / "loop"); });
    cli("sweep-json-before-device");
    // Reproduce files.
    cli("check-repro-truncated", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "full.h5", [](golden::CaseRecord&) {});
      copy_truncated(e.dir / "full.h5", e.dir / "truncated.h5", 2048);
    });
    cli("check-repro-no-case", Needs::nothing, [](const Env& e) {
      golden::write_golden_file(e.dir / "empty.h5", golden::current_provenance(), "repro", {});
    });
    cli("check-repro-expert-id", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "ids.h5", [](golden::CaseRecord& r) { values<std::int32_t>(r, "routing/topk_ids")[3] = 8; });
    });
    cli("check-repro-nan-input", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "nan.h5", [](golden::CaseRecord& r) { values<std::uint16_t>(r, "inputs/a")[7] = 0x7fc0; });
    });
    cli("check-repro-inf-weight", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "inf.h5", [](golden::CaseRecord& r) {
        values<float>(r, "routing/topk_weights")[1] = INFINITY;
      });
    });
    cli("check-repro-wrong-shape", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "shape.h5", [](golden::CaseRecord& r) {
        golden::Array& a = r.datasets.at("inputs/a").array;
        a.shape = {a.shape[1], a.shape[0]};
      });
    });
    cli("check-repro-dtype-mismatch", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "dtype.h5", [](golden::CaseRecord& r) { r.datasets.at("inputs/a").array.float16 = DType::f16; });
    });
    cli("check-repro-wrong-element-type", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "type.h5", [](golden::CaseRecord& r) {
        const auto& ids = values<std::int32_t>(r, "routing/topk_ids");
        r.datasets.at("routing/topk_ids").array =
            golden::make_array<float>(r.datasets.at("routing/topk_ids").array.shape, std::vector<float>(ids.begin(), ids.end()));
      });
    });
    cli("check-repro-missing-attribute", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "attr.h5", [](golden::CaseRecord& r) { r.attributes.erase("topk"); });
    });
    cli("check-repro-unknown-weight-type", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "type.h5", [](golden::CaseRecord& r) { r.attributes["weight_type"] = std::string("int3"); });
    });
    cli("check-repro-name-mismatch", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "name.h5", [](golden::CaseRecord& r) { r.attributes["seed"] = std::int64_t(22); });
    });
    cli("check-repro-zero-experts", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "e0.h5", [](golden::CaseRecord& r) { r.attributes["experts"] = std::int64_t(0); });
    });
    cli("check-repro-topk-above-experts", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "topk.h5", [](golden::CaseRecord& r) { r.attributes["topk"] = std::int64_t(9); });
    });
    cli("check-repro-code-out-of-range", Needs::nothing, [](const Env& e) {
      write_repro(e.dir / "code.h5", [](golden::CaseRecord& r) { values<std::uint8_t>(r, "weights/codes")[5] = 16; });
    });
    cli("check-repro-schema-version", Needs::nothing, [](const Env& e) {
      golden::Provenance p = golden::current_provenance();
      p.schema_version = 99;
      golden::write_golden_file(e.dir / "v99.h5", p, "repro", {small_record()});
    });
    cli("check-repro-not-moeval", Needs::nothing, [](const Env& e) {
      golden::H5File f = golden::H5File::create(e.dir / "other.h5");
      f.root().set_attribute("title", std::string("someone else's file"));
      f.close();
    });
    cli("check-repro-no-gpu", Needs::no_gpu);
    cli("check-repro-global-heap-loop");
    cli("check-repro-heap-collection-too-small");
    cli("check-repro-heap-object-overruns");
    cli("check-repro-heap-past-end");
    cli("check-repro-dataspace-too-large", Needs::nothing, [](const Env& e) {
      // inputs/a replaced by a 2^20 x 2^15 uint16 dataset whose chunks were never written: the
      // file stays a few KB while its dataspace claims 64 GiB (what a corrupt dims field says).
      const golden::CaseRecord r = small_record();
      const fs::path path = e.dir / "huge.h5";
      golden::write_golden_file(path, golden::current_provenance(), "repro", {r});
      const std::string a = "/" + r.name + "/inputs/a";
      const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      ASSERT_GE(f, 0);
      ASSERT_GE(H5Ldelete(f, a.c_str(), H5P_DEFAULT), 0);
      const hsize_t dims[2] = {hsize_t(1) << 20, hsize_t(1) << 15}, chunk[2] = {64, 64};
      const hid_t space = H5Screate_simple(2, dims, nullptr), dcpl = H5Pcreate(H5P_DATASET_CREATE);
      H5Pset_chunk(dcpl, 2, chunk);
      const hid_t ds = H5Dcreate2(f, a.c_str(), H5T_STD_U16LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
      EXPECT_GE(ds, 0);
      H5Dclose(ds);
      H5Pclose(dcpl);
      H5Sclose(space);
      ASSERT_GE(H5Fclose(f), 0);
    });
    // Golden corpus.
    cli("golden-file-missing");
    cli("golden-not-hdf5", Needs::nothing, [](const Env& e) { std::ofstream(e.dir / "layer.h5") << "not hdf5\n"; });
    cli("golden-truncated", Needs::nothing,
        [](const Env& e) { copy_truncated(fs::path(MOEVAL_GOLDEN_DATA) / "layer.h5", e.dir / "layer.h5", 65536); });
    cli("golden-other-family-root", Needs::nothing,
        [](const Env& e) { fs::copy_file(fs::path(MOEVAL_GOLDEN_DATA) / "wna16.h5", e.dir / "layer.h5"); });
    cli("golden-other-family-cases", Needs::nothing, [](const Env& e) {
      const golden::GoldenReader wna16(fs::path(MOEVAL_GOLDEN_DATA) / "wna16.h5");
      golden::write_golden_file(e.dir / "layer.h5", wna16.provenance(), "layer", wna16.read_all());
    });
    cli("golden-one-case-differs", Needs::nothing, [](const Env& e) {
      const golden::GoldenReader layer(fs::path(MOEVAL_GOLDEN_DATA) / "layer.h5");
      std::vector<golden::CaseRecord> cases = layer.read_all();
      values<std::uint16_t>(cases[2], "expected/out/y16")[0] ^= 1;
      golden::write_golden_file(e.dir / "layer.h5", layer.provenance(), "layer", cases);
    });
    cli("golden-update-full-disk", Needs::root);
    cli("golden-update-read-only", Needs::root);
    // No GPU.
    cli("sweep-no-gpu", Needs::no_gpu);
    cli("bench-no-gpu", Needs::no_gpu);
    cli("check-require-gpu-no-gpu", Needs::no_gpu);
    // Problem validation (fixtures).
    lib("problem-negative-tokens", [](const Env&) { return problem_message([](MoeProblem& p) { p.tokens = -1; }); });
    lib("problem-zero-tokens", [](const Env&) { return problem_message([](MoeProblem& p) { p.tokens = 0; }); });
    lib("problem-zero-experts", [](const Env&) { return problem_message([](MoeProblem& p) { p.experts = 0; }); });
    lib("problem-topk-above-experts", [](const Env&) {
      return problem_message([](MoeProblem& p) { p.experts = 2, p.topk = 3; });
    });
    lib("problem-expert-map-length", [](const Env&) {
      return problem_message([](MoeProblem& p) { p.expert_map = {0, 1, -1}; });
    });
    lib("problem-expert-map-id", [](const Env&) {
      return problem_message([](MoeProblem& p) { p.expert_map = {0, 1, -1, -1, 5, -1, -1, -1}; });
    });
    lib("problem-group-size", [](const Env&) { return problem_message([](MoeProblem& p) { p.scheme.group_size = 48; }); });
    lib("problem-k-not-multiple-of-group", [](const Env&) { return problem_message([](MoeProblem& p) { p.inter = 80; }); });
    lib("problem-act-order-zero-point", [](const Env&) {
      return problem_message([](MoeProblem& p) { p.scheme.act_order = true; });
    });
    lib("problem-empty-experts", [](const Env&) {
      return problem_message([](MoeProblem& p) { p.routing = {RoutingKind::empty_experts, true, 1.2, 7}; });
    });
    lib("problem-k-shards-too-many", [](const Env&) { return problem_message([](MoeProblem& p) { p.k_shards = 2048; }); });
    lib("problem-zipf-exponent-nan", [](const Env&) {
      return problem_message([](MoeProblem& p) { p.routing.zipf_exponent = std::nan(""); });
    });
    // Kernels' host wrappers (argument checks before any CUDA call).
    lib("kernel-bits", [](const Env&) { return wna16_message([](auto& a) { a.weights.bits = 3; }); });
    lib("kernel-k-not-multiple-of-tile", [](const Env&) { return wna16_message([](auto& a) { a.shape.k = 48; }); });
    lib("kernel-n-not-multiple-of-tile", [](const Env&) { return wna16_message([](auto& a) { a.shape.n = 24; }); });
    lib("kernel-group-size", [](const Env&) { return wna16_message([](auto& a) { a.weights.group_size = 48; }); });
    lib("kernel-block-size", [](const Env&) { return wna16_message([](auto& a) { a.blocks.block_size = 7; }); });
    lib("kernel-null-pointer", [](const Env&) { return wna16_message([](auto& a) { a.a = nullptr; }); });
    lib("kernel-topk-weights-missing", [](const Env&) {
      return wna16_message([](auto& a) { a.mul_topk_weights = true; });
    });
    lib("kernel-marlin-k-not-multiple-of-tile", [](const Env&) { return marlin_message([](auto& a) { a.shape.k = 24; }); });
    lib("kernel-marlin-zero-experts", [](const Env&) {
      return marlin_message([](auto& a) { a.weights.num_experts = 0; });
    });
    lib("kernel-marlin-act-order-zero-point", [](const Env&) {
      return marlin_message([](auto& a) {
        a.weights.type = kernels::MarlinWeightType::uint4;
        a.weights.act_order = true;
      });
    });
    lib("kernel-align-zero-experts", [](const Env&) {
      return message_of([] { (void)kernels::moe_align_sorted_capacity(8, 0, 16); });
    });
#if MOEVAL_CATALOGUE_GPU
    lib("kernel-host-pointer", [](const Env&) {
      alignas(16) static std::uint8_t host[64];
      return wna16_message([](auto& a) { a.a = host; });
    }, Needs::gpu);
    lib("kernel-foreign-device", [](const Env&) {
      void* on1 = nullptr;
      cudaSetDevice(1);
      cudaMalloc(&on1, 256);
      cudaSetDevice(0);
      void* on0 = nullptr;
      cudaMalloc(&on0, 256);
      const std::string message = wna16_message([&](auto& a) {
        a.a = on0, a.c = on1, a.weights.qweight = static_cast<std::uint8_t*>(on0), a.weights.scales = on0;
        a.blocks.sorted_token_ids = a.blocks.expert_ids = a.blocks.num_tokens_post_padded = static_cast<std::int32_t*>(on0);
      });
      cudaFree(on0);
      cudaFree(on1);
      return message;
    }, Needs::two_gpus);
#else
    // Declared here too so the cpu binary knows every documented row has a trigger.
    lib("kernel-host-pointer", {}, Needs::gpu);
    lib("kernel-foreign-device", {}, Needs::two_gpus);
#endif
    return m;
  }();
  return t;
}

bool driver_present() {
  void* h = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (h) ::dlclose(h);
  return h != nullptr;
}

struct ShellRun {
  int exit = -1;
  std::string output;
};

ShellRun run_shell(const std::string& command) {
  ShellRun r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  const int status = ::pclose(pipe);
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string quote(const std::string& s) { return "'" + replace_all(s, "'", "'\\''") + "'"; }

class ErrorCatalogue : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    env_.dir = fs::temp_directory_path() / ("moeval-errors-" + std::to_string(::getpid()) + "-" + GetParam());
    fs::remove_all(env_.dir);
    fs::create_directories(env_.dir);
  }
  void TearDown() override { fs::remove_all(env_.dir); }
  Env env_;
};

TEST_P(ErrorCatalogue, ProducesTheDocumentedMessage) {
  const auto doc = read_doc();
  const auto row_it = doc.find(GetParam());
  ASSERT_NE(row_it, doc.end()) << "docs/errors.md has no row '" << GetParam() << "'";
  const DocRow& row = row_it->second;
  const Trigger& trigger = triggers().at(GetParam());
  const int devices = testbed::visible_devices().count;
  switch (trigger.needs) {
    case Needs::root: {
      if (::geteuid() != 0) GTEST_SKIP() << "needs root (mounts a small tmpfs in a private mount namespace)";
      // Root in a container without CAP_SYS_ADMIN cannot mount: that is a missing tool, not a failure.
      const fs::path probe = env_.dir / "probe";
      fs::create_directories(probe);
      if (run_shell("unshare -m sh -c 'mount -t tmpfs -o size=16k tmpfs " + probe.string() + "'").exit != 0) {
        GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace here";
      }
      break;
    }
    case Needs::no_gpu:
      if (devices > 0 || driver_present()) GTEST_SKIP() << "documents the message of a machine without an NVIDIA driver";
      break;
    case Needs::gpu:
      if (devices < 1) GTEST_SKIP() << "needs 1 CUDA device";
      break;
    case Needs::two_gpus:
      if (devices < 2) GTEST_SKIP() << "needs 2 CUDA devices";
      break;
    case Needs::nothing: break;
  }
  const std::string expected = env_.substitute(row.message);
  if (trigger.library) {
    const std::string message = trigger.library(env_);
    if (row.message == "(accepted)") {
      EXPECT_EQ(message, "") << "documented as accepted";
    } else {
      EXPECT_NE(message.find(expected), std::string::npos) << "documented: " << expected << "\nactual:     " << message;
    }
    return;
  }
  ASSERT_EQ(row.input.rfind("moeval", 0), 0u) << "a CLI row's input is the command: " << row.input;
  if (trigger.setup) trigger.setup(env_);
  std::string command = std::string(MOEVAL_BINARY) + env_.substitute(row.input.substr(6));
  const bool full = row.input.find("{full}") != std::string::npos, ro = row.input.find("{ro}") != std::string::npos;
  if (full || ro) {
    const fs::path mount = env_.dir / (full ? "full" : "ro");
    fs::create_directories(mount);
    command = "unshare -m sh -c " +
              quote("mount -t tmpfs -o " + std::string(full ? "size=64k" : "ro,size=64k") + " tmpfs " + mount.string() +
                    " && exec " + command);
  }
  const ShellRun r = run_shell(command);
  EXPECT_EQ(std::to_string(r.exit), row.exit) << command << "\n" << r.output;
  EXPECT_NE(r.output.find(expected), std::string::npos) << command << "\ndocumented: " << expected << "\nactual:\n"
                                                        << r.output;
  // One clear message: no HDF5 error stack, no destructor noise, no crash.
  EXPECT_EQ(r.output.find("HDF5-DIAG"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("~H5"), std::string::npos) << r.output;
  EXPECT_LT(r.exit, 128) << "killed by a signal: " << r.output;
}

#if !MOEVAL_CATALOGUE_GPU  // the gpu and multi_gpu binaries run only the device rows
// A run ended from outside keeps what it had: every line printed so far reached the pipe (stdout
// is line-buffered), the JSON report holds the results so far with "complete": false, and the
// signal handler left no temp file behind.
TEST(KilledRun, KeepsItsLinesAndItsPartialReport) {
  const fs::path dir = fs::temp_directory_path() / ("moeval-killed-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string json = (dir / "r.json").string();
  // Two result lines: the report is rewritten right after each line is printed, so after the
  // second line the first result is certainly in the file.
  const test_support::SignalledRun r =
      test_support::run_and_signal(MOEVAL_BINARY, {"check", "--cpu-only", "--json", json}, 2, SIGTERM);
  ASSERT_TRUE(r.started);
  const std::string& text = r.output;
  const int rows = r.results;
  const int status = r.status;
  ASSERT_TRUE(WIFSIGNALED(status)) << "moeval finished before it was killed; output:\n" << text;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_NE(text.find("moeval check:"), std::string::npos) << text;
  EXPECT_GE(rows, 2) << text;
  std::ifstream in(json);
  ASSERT_TRUE(in.good()) << "no partial report at " << json;
  std::stringstream body;
  body << in.rdbuf();
  EXPECT_NE(body.str().find("\"complete\": false"), std::string::npos) << body.str();
  EXPECT_NE(body.str().find("cpu golden"), std::string::npos) << body.str();
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "temp left: " << e.path();
  }
  fs::remove_all(dir);
}

// Ctrl-C while the output goes to a pipe: the lines printed so far arrive, the run stops after the
// job in flight, and the --json report is written once more, saying that the run was interrupted
// and how many jobs did not run (it said "complete": true and nothing else before).
TEST(InterruptedRun, JsonReportSaysInterrupted) {
  const fs::path dir = fs::temp_directory_path() / ("moeval-interrupted-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string json = (dir / "r.json").string();
  // Signalled after the first result line: one golden family done, three left.
  const test_support::SignalledRun r =
      test_support::run_and_signal(MOEVAL_BINARY, {"check", "--cpu-only", "--json", json}, 1, SIGINT);
  ASSERT_TRUE(r.started);
  ASSERT_EQ(r.results, 1) << r.output;
  const std::string& text = r.output;
  const int status = r.status;
  ASSERT_TRUE(WIFSIGNALED(status)) << text;
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_NE(text.find("check: interrupted after"), std::string::npos) << text;
  std::ifstream in(json);
  std::stringstream body;
  body << in.rdbuf();
  EXPECT_NE(body.str().find("\"interrupted\": true"), std::string::npos) << body.str();
  EXPECT_NE(body.str().find("\"not_run\": "), std::string::npos) << body.str();
  EXPECT_EQ(body.str().find("\"not_run\": 0"), std::string::npos) << body.str();
  fs::remove_all(dir);
}


TEST(ErrorCatalogueDoc, EveryRowHasATriggerAndEveryTriggerARow) {
  const auto doc = read_doc();
  EXPECT_GE(doc.size(), 40u);
  for (const auto& [id, row] : doc) EXPECT_TRUE(triggers().count(id)) << "documented row without a test: " << id;
  for (const auto& [id, trigger] : triggers()) EXPECT_TRUE(doc.count(id)) << "test without a documented row: " << id;
}
#endif

std::vector<std::string> ids() {
  std::vector<std::string> out;
  for (const auto& [id, trigger] : triggers()) {
    // Each row runs in exactly one binary: cpu (needs no device), gpu (one), multi_gpu (two).
    const bool gpu = trigger.needs == Needs::gpu || trigger.needs == Needs::two_gpus;
    const bool two = trigger.needs == Needs::two_gpus;
    if (gpu == bool(MOEVAL_CATALOGUE_GPU) && two == bool(MOEVAL_CATALOGUE_TWO_GPUS)) out.push_back(id);
  }
  return out;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) { return replace_all(info.param, "-", "_"); }

INSTANTIATE_TEST_SUITE_P(Rows, ErrorCatalogue, ::testing::ValuesIn(ids()), test_name);

}  // namespace
}  // namespace moeval::cli
