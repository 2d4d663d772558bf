// Private: a grow-only device allocation, so a benchmark loop allocates nothing after its first run.
#pragma once

#include <cstddef>

namespace moeval::reference::detail {

class Workspace {
 public:
  Workspace() = default;
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // At least `bytes` on the current device; contents are not preserved when it grows.
  void* reserve(std::size_t bytes);
  template <typename T>
  T* reserve_for(std::size_t count) {
    return static_cast<T*>(reserve(count * sizeof(T)));
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace moeval::reference::detail
