#include "moeval/golden/atomic_write.h"

#include <signal.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <system_error>

#include "moeval/golden/errors.h"

namespace moeval::golden {
namespace {

// fsync of a file or directory; a directory fsync makes the rename itself durable.
void sync_path(const std::filesystem::path& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) throw golden_error(path, "", std::string("cannot open for fsync: ") + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw golden_error(path, "", std::string("fsync failed: ") + std::strerror(err));
}

std::filesystem::path directory_of(const std::filesystem::path& target) {
  return target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
}

// Temp files to unlink from a signal handler: fixed storage, no allocation, lock-free claims.
constexpr int kTempSlots = 8;
char temp_paths[kTempSlots][PATH_MAX];
std::atomic<int> temp_state[kTempSlots];  // 0 free, 1 being filled, 2 registered

extern "C" void remove_temps_and_reraise(int sig) {
  for (int i = 0; i < kTempSlots; ++i) {
    if (temp_state[i].load(std::memory_order_acquire) == 2) ::unlink(temp_paths[i]);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

TempFileRegistration::TempFileRegistration(const std::filesystem::path& path) {
  const std::string& text = path.native();
  if (text.size() >= PATH_MAX) return;
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (temp_state[i].compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      std::memcpy(temp_paths[i], text.c_str(), text.size() + 1);
      temp_state[i].store(2, std::memory_order_release);
      slot_ = i;
      return;
    }
  }
}

TempFileRegistration::~TempFileRegistration() {
  if (slot_ >= 0) temp_state[slot_].store(0, std::memory_order_release);
}

void install_temp_cleanup() {
  static const bool installed = [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction action {};
      action.sa_handler = remove_temps_and_reraise;
      sigemptyset(&action.sa_mask);
      ::sigaction(sig, &action, nullptr);
    }
    return true;
  }();
  (void)installed;
}

std::filesystem::path temp_path_for(const std::filesystem::path& target) {
  std::filesystem::path temp = target;
  temp += ".tmp." + std::to_string(::getpid());
  return temp;
}

void replace_atomically(const std::filesystem::path& target,
                        const std::function<void(const std::filesystem::path& temp)>& write) {
  const std::filesystem::path temp = temp_path_for(target);
  std::error_code ec;
  if (!std::filesystem::is_directory(directory_of(target), ec)) {
    throw golden_error(target, "", "its directory does not exist");
  }
  std::filesystem::remove(temp, ec);
  const TempFileRegistration registered(temp);
  try {
    write(temp);
    sync_path(temp, false);
  } catch (const GoldenError& e) {
    std::filesystem::remove(temp, ec);
    // Name the file being replaced (the temp file is gone): "golden file 'wna16.h5': the new
    // version could not be written: cannot write 842941 bytes: No space left on device".
    const std::string prefix = "golden file '" + temp.string() + "': ";
    const std::string what = e.what();
    if (what.rfind(prefix, 0) != 0) throw;
    throw golden_error(target, "", "the new version could not be written: " + what.substr(prefix.size()));
  } catch (...) {
    std::filesystem::remove(temp, ec);
    throw;
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    std::filesystem::remove(temp, ec);
    throw golden_error(target, "", std::string("cannot rename the new version into place: ") + std::strerror(err));
  }
  sync_path(directory_of(target), true);
}

namespace {

// A temp file belongs to a writer that still runs when its "<pid>" suffix names a live process
// (kill(pid, 0) succeeds, or fails only for lack of permission): a concurrent update must not lose it.
bool writer_alive(const std::string& suffix) {
  if (suffix.empty() || suffix.find_first_not_of("0123456789") != std::string::npos || suffix.size() > 9) return false;
  const pid_t pid = static_cast<pid_t>(std::stol(suffix));
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

}  // namespace

int remove_stale_temps(const std::filesystem::path& target) {
  const std::string prefix = target.filename().string() + ".tmp.";
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory_of(target), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || writer_alive(name.substr(prefix.size()))) continue;
    if (std::filesystem::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace moeval::golden
