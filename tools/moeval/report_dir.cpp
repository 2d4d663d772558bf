#include "report_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "exit_codes.h"
#include "report_formats.h"
#include "moeval/golden/atomic_write.h"

namespace moeval::cli {
namespace {

void write_text_atomically(const std::filesystem::path& target, const std::string& text) {
  golden::replace_atomically(target, [&](const std::filesystem::path& temp) {
    std::ofstream out(temp, std::ios::binary);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("cannot write '" + temp.string() + "'");
  });
}

}  // namespace

ReportDir::ReportDir(std::filesystem::path dir, nlohmann::json header) : dir_(std::move(dir)) {
  auto fail = [&](const std::string& why) { return UsageError("cannot write the report directory '" + dir_.string() + "': " + why); };
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw fail(ec.message());
  if (!std::filesystem::is_directory(dir_)) throw fail("it is not a directory");
  std::filesystem::remove(dir_ / "report.json", ec);  // a stale report of an earlier run would be read as this one's
  const auto path = dir_ / "results.jsonl";
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw fail(std::strerror(errno) + std::string(" (creating results.jsonl)"));
  report_.header = std::move(header);
  nlohmann::json line = report_.header;
  line["type"] = "header";
  const std::string text = line.dump() + "\n";
  if (::write(fd_, text.data(), text.size()) != ssize_t(text.size())) throw fail(std::strerror(errno));
}

ReportDir::~ReportDir() {
  if (fd_ >= 0) ::close(fd_);
}

void ReportDir::append_line(const nlohmann::json& line) {
  // One write(2) of a whole line to an O_APPEND file: a kill leaves whole lines (or, at worst, a
  // torn last line, which load_run drops).
  const std::string text = line.dump() + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (!warned_) {
        std::fprintf(stderr, "moeval: warning: cannot append to '%s': %s; report.json is still written at the end\n",
                     (dir_ / "results.jsonl").c_str(), std::strerror(errno));
        warned_ = true;
      }
      return;
    }
    done += std::size_t(n);
  }
}

void ReportDir::add(const nlohmann::json& check) {
  const std::lock_guard<std::mutex> lock(mutex_);
  report_.checks.push_back(check);
  nlohmann::json line = check;
  line["type"] = "check";
  append_line(line);
}

void ReportDir::finish(const nlohmann::json& end) {
  const std::lock_guard<std::mutex> lock(mutex_);
  report_.end = end;
  nlohmann::json line = end;
  line["type"] = "end";
  append_line(line);
  ::fsync(fd_);
  write_final_files(dir_, report_);
}

void write_final_files(const std::filesystem::path& dir, const RunReport& report) {
  const auto write = [&](const char* name, const std::string& text) {
    try {
      write_text_atomically(dir / name, text);
    } catch (const std::exception& e) {
      throw std::runtime_error("cannot write the report '" + (dir / name).string() + "': " + e.what());
    }
  };
  write("report.json", to_report_json(report).dump(2) + "\n");
  write("results.csv", to_csv(report));
  write("junit.xml", to_junit(report));
}

}  // namespace moeval::cli
