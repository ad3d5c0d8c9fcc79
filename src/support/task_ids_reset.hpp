// Private to support/: the fork sequence's first step in a child.
#pragma once

namespace userperf::support {

// The calling thread's cached ids are stale (a fork child's thread has new ones).
void forget_task_ids();

}  // namespace userperf::support
