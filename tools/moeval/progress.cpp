#include "progress.h"

#include <cstdio>

namespace moeval::cli {
namespace {

std::string duration(double s) {
  if (s < 0 || s > 1e7) return "?";
  const long t = long(s + 0.5);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, t / 60 % 60);
  else if (t >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lds", t);
  return buf;
}

}  // namespace

std::string format_progress(std::size_t done, std::size_t total, double elapsed_s, long failed) {
  const double rate = elapsed_s > 0 ? double(done) / elapsed_s : 0.0;
  char buf[160];
  std::snprintf(buf, sizeof buf, "[%zu/%zu] %.1f checks/s, ETA %s, %ld failed", done, total, rate,
                done == 0 || rate <= 0 ? "?" : duration(double(total - done) / rate).c_str(), failed);
  return buf;
}

std::string where_ran(const nlohmann::json& rec) {
  if (rec.contains("devices") && rec["devices"].is_array() && !rec["devices"].empty()) {
    std::string where = "gpu";
    for (const auto& d : rec["devices"]) where += (where.size() > 3 ? "," : "") + d.dump();
    return where;
  }
  return rec.contains("device") && rec["device"].is_number() ? "gpu" + rec["device"].dump() : std::string("cpu");
}

Progress::Progress(std::size_t total, bool terminal, double plain_every_s)
    : total_(total), terminal_(terminal), plain_every_s_(plain_every_s), start_(std::chrono::steady_clock::now()),
      last_plain_(start_) {}

void Progress::record(const nlohmann::json& rec) {
  ++done_;
  const std::string status = rec.value("status", "?");
  if (status == "FAIL") ++failed_;
  const std::string where = where_ran(rec);
  const std::string reason = rec.value("reason", "");
  if (terminal_) std::fputs("\r\033[K", stderr);
  std::printf("%-8s %s %s%s%s\n", status.c_str(), where.c_str(), rec.value("id", "").c_str(), reason.empty() ? "" : "  ",
              reason.c_str());
  std::fflush(stdout);
  draw();
}

void Progress::draw() {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K%s", format_progress(done_, total_, elapsed, failed_).c_str());
    std::fflush(stderr);
  } else if (std::chrono::duration<double>(now - last_plain_).count() >= plain_every_s_ && done_ < total_) {
    last_plain_ = now;
    std::printf("progress %s\n", format_progress(done_, total_, elapsed, failed_).c_str());
    std::fflush(stdout);
  }
}

void Progress::finish() {
  if (terminal_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

}  // namespace moeval::cli
