// Descriptors of a library that lives inside someone else's program: the recorder's agent is
// preloaded into every recorded process, and the program owns the descriptor table. A program that
// closes every descriptor it did not open (daemons, closefrom, close_range) and then opens its own
// must never have the agent write into them. So, once a floor is set (the agent sets it; the
// library used directly keeps 0 and behaves as before):
// - every descriptor userperf creates is moved to the floor or above (F_DUPFD_CLOEXEC): a
//   program's own descriptors are allocated lowest-first and do not reach that far;
// - each is registered with its identity (st_dev, st_ino), which the agent's close/close_range/
//   closefrom/dup2/dup3 wrappers consult, and still_ours() checks before a write.
// Lock-free and async-signal-safe after set_descriptor_floor.
#pragma once

namespace userperf::support {

// From now on place_descriptor moves descriptors to `floor` and above (0: off). Once, before any
// descriptor is placed.
void set_descriptor_floor(int floor);
int descriptor_floor();

// The floor for a process whose RLIMIT_NOFILE soft limit is `soft_limit`: half of it, at most
// 4096 (the kernel sizes the descriptor table to the highest descriptor, and fork copies it), 0
// when the limit leaves no room.
int descriptor_floor_for(unsigned long soft_limit);

// A descriptor userperf just created: moved to the floor or above (the low one closed) and
// registered; returned as is when the floor is 0 or no slot above it is free. Returns the
// descriptor to use; `fd` < 0 is passed through.
int place_descriptor(int fd);

// Whether `fd` is registered as userperf's.
bool owns_descriptor(int fd);
// Forgets `fd` (userperf is closing it).
void release_descriptor(int fd);
// Whether `fd` is registered and still the same open file (the program may have closed it with a
// raw system call and opened another at the same number). False when not registered.
bool still_ours(int fd);

// The first descriptor at or above `from` and at most `to` that is registered, -1 when none
// (close_range splits around them).
int next_owned_descriptor(unsigned from, unsigned to);

}  // namespace userperf::support
