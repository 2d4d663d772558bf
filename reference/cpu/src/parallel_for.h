// Private: run body(i) for i in [0, count) on all hardware threads.
//
// Tasks are handed out one at a time from an atomic counter, so uneven tasks (experts with many
// rows next to experts with one) still balance. The first exception thrown by a task is rethrown
// on the calling thread after every worker has stopped.
#pragma once

#include <cstdint>
#include <functional>

namespace moeval::reference {

void parallel_for(std::int64_t count, const std::function<void(std::int64_t)>& body);

}  // namespace moeval::reference
