#include "moeval/golden/atomic_write.h"

#include <signal.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
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

}  // namespace

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
  try {
    write(temp);
    sync_path(temp, false);
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
