#include "report_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "exit_codes.h"
#include "json_text.h"
#include "text_file.h"
#include "moeval/golden/atomic_write.h"

namespace moeval::cli {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

std::string directory_of(const std::string& path) {
  const std::filesystem::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N name one of our open descriptors: write
// through a duplicate of it (same offset), not through a second open of whatever it points to,
// which would start at offset 0 of a regular file and overwrite what was printed there.
int named_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string p = prefix;
    if (path.rfind(p, 0) == 0 && path.size() > p.size() && path.size() <= p.size() + 6 &&
        path.find_first_not_of("0123456789", p.size()) == std::string::npos) {
      return std::stoi(path.substr(p.size()));
    }
  }
  return -1;
}

}  // namespace

ReportFile::ReportFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) return;
  auto fail = [&](const std::string& why) -> UsageError {
    return UsageError("cannot write the JSON report '" + path_ + "': " + why);
  };
  if (const int fd = named_descriptor(path_); fd >= 0) {
    stream_fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (stream_fd_ < 0) throw fail(errno_text(errno));
    return;
  }
  // Follow symlinks ourselves: rename() onto a link would replace the link, not what it names.
  target_ = path_;
  struct stat st {};
  for (int hops = 0;; ++hops) {
    if (::lstat(target_.c_str(), &st) != 0) {
      if (errno != ENOENT) throw fail(errno_text(errno));
      st = {};
      break;
    }
    if (!S_ISLNK(st.st_mode)) break;
    if (hops == 40) throw fail(errno_text(ELOOP));
    std::error_code ec;
    const std::filesystem::path link = std::filesystem::read_symlink(target_, ec);
    if (ec) throw fail(ec.message());
    target_ = link.is_absolute() ? link.string() : (std::filesystem::path(directory_of(target_)) / link).string();
  }
  if (st.st_mode != 0) {
    if (S_ISDIR(st.st_mode)) throw fail("it is a directory");
    if (!S_ISREG(st.st_mode)) {
      // Device, FIFO or socket: write into it, never replace it. O_NONBLOCK so a FIFO without a
      // reader fails now (ENXIO) instead of hanging.
      stream_fd_ = ::open(target_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
      if (stream_fd_ < 0) {
        throw fail(errno == ENXIO ? std::string("no process is reading that FIFO") : errno_text(errno));
      }
      ::fcntl(stream_fd_, F_SETFL, ::fcntl(stream_fd_, F_GETFL) & ~O_NONBLOCK);
      return;
    }
    mode_ = st.st_mode & 07777;
  }
  const std::string dir = directory_of(target_);
  struct stat dst {};
  if (::stat(dir.c_str(), &dst) != 0) {
    throw fail(errno == ENOENT ? "its directory '" + dir + "' does not exist" : errno_text(errno));
  }
  if (!S_ISDIR(dst.st_mode)) throw fail("'" + dir + "' is not a directory");
  golden::remove_stale_temps(target_);
  // Probe: can a file be created beside the target? (permission, read-only file system, quota)
  const std::string temp = golden::temp_path_for(target_).string();
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw fail(errno_text(errno) + " (creating '" + temp + "')");
  ::close(fd);
  ::unlink(temp.c_str());
}

ReportFile::~ReportFile() {
  if (stream_fd_ >= 0) ::close(stream_fd_);
}

void ReportFile::replace(const std::string& text, bool durable) {
  // The constructor removed the temp files of dead writers: each rewrite need not scan again.
  write_text_file_atomically(target_, text, ReplaceOptions{mode_, durable, false});
}

void ReportFile::progress(const nlohmann::json& report) {
  if (path_.empty() || stream_fd_ >= 0) return;  // a stream gets the report once, at the end
  nlohmann::json partial = report;
  partial["complete"] = false;
  try {
    replace(json_text(partial, 2) + "\n", false);
  } catch (const std::exception& e) {
    if (!warned_) {
      std::fprintf(stderr, "moeval: warning: cannot update the JSON report '%s': %s; trying again at the end\n",
                   path_.c_str(), e.what());
      warned_ = true;
    }
  }
}

void ReportFile::finish(const nlohmann::json& report) {
  if (path_.empty()) return;
  nlohmann::json full = report;
  full["complete"] = true;
  const std::string text = json_text(full, 2) + "\n";
  try {
    if (stream_fd_ >= 0) {
      std::fflush(stdout);  // the report follows the lines already printed when both go to stdout
      write_all(stream_fd_, text);
    } else {
      replace(text, true);
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot write the JSON report '" + path_ + "': " + e.what());
  }
}

}  // namespace moeval::cli
