// The calling thread's cgroup v2, for bpf_get_current_cgroup_id, bpf_get_current_ancestor_cgroup_id
// and bpf_current_task_under_cgroup: one lookup serves all three. The thread's cgroup is the
// "0::/path" line of /proc/thread-self/cgroup; an ancestor's id is the inode number of its
// directory under the cgroup2 mount (kernfs makes a cgroup's inode number its id, so these are the
// kernel's cgroup ids). SIGNAL-SAFE: open/read/close into a stack buffer and one fstatat per
// answer; no allocation, no lock.
//
// Staleness: none is cached. The kernel offers no notice of a thread's move to another cgroup, so
// any cache kept across calls could answer for a cgroup the thread has left for as long as it
// lives; every call reads the thread's cgroup afresh (the /proc read is the cost: ~21 us on a
// loaded hybrid-hierarchy test machine, docs/bpf.md "Cgroups"). A move or rename between the read
// and the fstatat makes that one answer 0 (not under, no id).
//
// Namespaces: paths and levels are those the thread's cgroup namespace shows; in the initial one
// (the usual case) they are the kernel's.
#pragma once

#include <cstdint>

#include "bpf/maps/cgroup_array.hpp"

namespace userperf::bpf {

// An O_PATH descriptor of the root of the first cgroup2 mount of the hierarchy's root
// (/proc/self/mountinfo), found at the first call and kept; -1 when there is none.
int cgroup2_root_fd();

// bpf_get_current_cgroup_id: the id of the thread's cgroup, 0 when it cannot be read (no cgroup2
// mount, /proc unreadable).
std::uint64_t current_cgroup_id();
// bpf_get_current_ancestor_cgroup_id: the id of the thread's ancestor cgroup at `level` (0 is the
// root), its own cgroup at its own level; 0 when `level` is negative or the thread's cgroup is
// shallower (the kernel's level is an int: a program's 64-bit argument is truncated first).
std::uint64_t current_ancestor_cgroup_id(std::int32_t level);
// task_under_cgroup_hierarchy(current, cgroup): the thread's cgroup is `cgroup` or a descendant,
// which is whether its ancestor at cgroup's level is cgroup.
bool current_under_cgroup(const CgroupRef& cgroup);

}  // namespace userperf::bpf
