#include "report_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "exit_codes.h"
#include "json_text.h"
#include "report_formats.h"
#include "text_file.h"
#include "moeval/golden/atomic_write.h"

namespace moeval::cli {

void ReportDir::create(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError("cannot write the report directory '" + dir.string() + "': " + ec.message());
  if (!std::filesystem::is_directory(dir)) {
    throw UsageError("cannot write the report directory '" + dir.string() + "': it is not a directory");
  }
}

void ReportDir::check_writable(const std::filesystem::path& dir, const std::string& what) {
  const auto refuse = [&](int err) {
    throw UsageError("cannot write " + what + " '" + dir.string() + "': " + std::strerror(err));
  };
  std::error_code ec;
  // Absolute, so that "out" or "a/b" end their walk at the working directory, not at "out" or "a".
  std::filesystem::path at = std::filesystem::absolute(dir.empty() ? "." : dir, ec).lexically_normal();
  if (ec) refuse(ec.value());
  // The nearest part of the path that exists: create_directories would make the rest below it.
  while (!std::filesystem::exists(std::filesystem::symlink_status(at, ec)) && at.has_parent_path() &&
         at.parent_path() != at) {
    at = at.parent_path();
  }
  if (!std::filesystem::exists(std::filesystem::symlink_status(at, ec))) return;  // not even "/": create() says why
  if (!std::filesystem::exists(at, ec)) refuse(EEXIST);  // a dangling symlink: create_directories' answer
  if (!std::filesystem::is_directory(at, ec)) refuse(ENOTDIR);
  if (::access(at.c_str(), W_OK | X_OK) != 0) refuse(errno);
}

ReportDir::ReportDir(std::filesystem::path dir, nlohmann::json header) : dir_(std::move(dir)) {
  report_.header = std::move(header);
  const std::string text = report_line(report_.header, ReportLine::header);  // before any file is touched
  create(dir_);
  try {
    fd_ = start_report_lines(dir_, text);
  } catch (const std::exception& e) {
    throw UsageError("cannot write the report directory '" + dir_.string() + "': " + e.what());
  }
}

ReportDir::~ReportDir() {
  if (fd_ >= 0) ::close(fd_);
}

void ReportDir::append_line(const std::string& line) {
  // One write(2) of a whole line to an O_APPEND file: a kill leaves whole lines (or, at worst, a
  // torn last line, which load_run drops).
  try {
    write_all(fd_, line);
  } catch (const std::exception& e) {
    if (!warned_) {
      std::fprintf(stderr, "moeval: warning: cannot append to '%s': %s; report.json is still written at the end\n",
                   (dir_ / "results.jsonl").c_str(), e.what());
      warned_ = true;
    }
  }
}

void ReportDir::add(const nlohmann::json& check) {
  const std::lock_guard<std::mutex> lock(mutex_);
  report_.checks.push_back(check);
  append_line(report_line(check, ReportLine::check));
}

void ReportDir::finish(const nlohmann::json& end) {
  const std::lock_guard<std::mutex> lock(mutex_);
  report_.end = end;
  append_line(report_line(end, ReportLine::end));
  ::fsync(fd_);
  write_final_files(dir_, report_);
}

void write_final_files(const std::filesystem::path& dir, const RunReport& report) {
  const auto write = [&](const char* name, const std::string& text) {
    try {
      write_text_file_atomically(dir / name, text);
    } catch (const std::exception& e) {
      throw std::runtime_error("cannot write the report '" + (dir / name).string() + "': " + e.what());
    }
  };
  write("report.json", json_text(to_report_json(report), 2) + "\n");
  write("results.csv", to_csv(report));
  write("junit.xml", to_junit(report));
}

int start_report_lines(const std::filesystem::path& dir, const std::string& lines) {
  // 1. What neither rename(2) nor unlink(2) can replace refuses the start now, not half-way.
  for (const char* name : kReportDirFiles) {
    struct stat st {};
    if (::lstat((dir / name).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      throw std::runtime_error("'" + (dir / name).string() +
                               "' is a directory, not a report file; move it away (nothing was changed)");
    }
  }
  const std::filesystem::path path = dir / "results.jsonl";
  // 2. Written and synced beside the old file.
  std::unique_ptr<PendingReplacement> pending;
  try {
    pending = std::make_unique<PendingReplacement>(path);
  } catch (const std::exception& e) {
    throw std::runtime_error(e.what() + std::string(" (creating '") + golden::temp_path_for(path).string() + "')");
  }
  pending->write(lines);
  pending->sync();
  // 3. The previous run's derived files, report.json first (kReportDirFiles' order).
  for (const char* name : kReportDirFiles) {
    if (std::string(name) == "results.jsonl") continue;
    if (::unlink((dir / name).c_str()) != 0 && errno != ENOENT) {
      const int err = errno;
      throw std::runtime_error(std::strerror(err) + std::string(" (removing the previous report's '") + (dir / name).string() +
                               "')");
    }
  }
  // 4. The directory becomes the new run's.
  try {
    return pending->commit_keeping_open();
  } catch (const std::exception& e) {
    throw std::runtime_error(e.what() + std::string(" (replacing '") + path.string() + "')");
  }
}

}  // namespace moeval::cli
