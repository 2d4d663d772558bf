#include "text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "moeval/golden/atomic_write.h"

namespace moeval::cli {
namespace {

[[noreturn]] void fail(int err) { throw std::runtime_error(std::strerror(err)); }

// The directory's entry made durable too: after a power cut the new file is there under its name.
void sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the data is synced; a directory that cannot be opened is not worth failing for
  ::fsync(fd);
  ::close(fd);
}

// "is a FIFO, not a regular file", and so on for each kind the reader refuses.
[[noreturn]] void refuse_kind(mode_t mode) {
  const char* kind = S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device"
                     : S_ISSOCK(mode)                           ? "a socket"
                                                                : "of another kind";
  throw std::runtime_error(std::string("is ") + kind + ", not a regular file");
}

// The file's bytes, or those of its first line (without the newline). Only regular files, and not
// past kMaxTextFileBytes: a FIFO without a writer blocked open() for ever (O_NONBLOCK keeps it from
// blocking until it is refused), and /dev/zero or a runaway file grew one string until the
// allocation failed gigabytes later.
std::string read_text(const std::filesystem::path& path, bool first_line) {
  // open() of a Unix socket fails with ENXIO ("No such device or address"): name it first.
  struct stat before {};
  if (::stat(path.c_str(), &before) == 0 && S_ISSOCK(before.st_mode)) refuse_kind(before.st_mode);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    const bool stat_failed = st.st_mode == 0;
    ::close(fd);
    if (stat_failed) fail(err);
    if (S_ISDIR(st.st_mode)) fail(EISDIR);
    refuse_kind(st.st_mode);
  }
  if (!first_line && std::uint64_t(st.st_size) > kMaxTextFileBytes) {
    ::close(fd);
    throw std::runtime_error("is " + std::to_string(st.st_size) + " bytes; report and bench files are read up to " +
                             std::to_string(kMaxTextFileBytes >> 20) + " MiB");
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      fail(err);
    }
    if (n == 0) break;
    if (text.size() + std::size_t(n) > kMaxTextFileBytes) {  // grown since fstat, or a first line that long
      ::close(fd);
      throw std::runtime_error("holds more than " + std::to_string(kMaxTextFileBytes >> 20) +
                               " MiB to read; report and bench files are read up to that size");
    }
    text.append(buffer, std::size_t(n));
    if (first_line) {
      // Stop at the first newline: the header line of a results.jsonl of many results is all a
      // caller asked for.
      if (const std::size_t end = text.find('\n', text.size() - std::size_t(n)); end != std::string::npos) {
        text.resize(end);
        break;
      }
    }
  }
  ::close(fd);
  return text;
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) { return read_text(path, false); }

std::string read_first_line(const std::filesystem::path& path) { return read_text(path, true); }

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(errno);
    if (n == 0) fail(ENOSPC);  // a regular file accepts no byte only when it cannot grow
    done += std::size_t(n);
  }
}

PendingReplacement::PendingReplacement(std::filesystem::path target, const ReplaceOptions& options)
    : target_(std::move(target)), temp_(golden::temp_path_for(target_)), options_(options) {
  if (options_.remove_stale_temps) golden::remove_stale_temps(target_);
  // Registered before it exists: a signal between open() and the registration would leave it.
  registration_ = std::make_unique<golden::TempFileRegistration>(temp_);
  // O_APPEND: results.jsonl goes on being appended to through this descriptor after the commit.
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(errno);
  if (options_.mode && ::fchmod(fd_, *options_.mode) != 0) {
    const int err = errno;  // the destructor does not run for a constructor that throws
    ::close(fd_);
    ::unlink(temp_.c_str());
    fail(err);
  }
}

PendingReplacement::~PendingReplacement() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void PendingReplacement::write(const std::string& text) {
  write_all(fd_, text);
  synced_ = false;
}

void PendingReplacement::sync() {
  if (options_.durable && !synced_ && ::fsync(fd_) != 0) fail(errno);
  synced_ = true;
}

void PendingReplacement::rename_into_place() {
  if (::rename(temp_.c_str(), target_.c_str()) != 0) fail(errno);
  committed_ = true;
  if (options_.durable) sync_directory(target_.parent_path());
}

void PendingReplacement::commit() {
  sync();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(errno);  // NFS reports a failed write here
  rename_into_place();
}

int PendingReplacement::commit_keeping_open() {
  sync();
  rename_into_place();
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void write_text_file_atomically(const std::filesystem::path& target, const std::string& text, const ReplaceOptions& options) {
  PendingReplacement pending(target, options);
  pending.write(text);
  pending.commit();
}

}  // namespace moeval::cli
