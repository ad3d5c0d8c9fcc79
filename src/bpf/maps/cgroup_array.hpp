// BPF_MAP_TYPE_CGROUP_ARRAY: an fd array of cgroup v2 directories, which
// bpf_current_task_under_cgroup finds with object_at(). A consumer stores a descriptor of a
// directory on a cgroup2 mount (any other descriptor is EBADF, as the kernel's
// cgroup_get_from_fd); the slot keeps what the helper needs to test membership without allocating
// or locking: the cgroup's id (its inode number on cgroup2, which is the kernel's cgroup id) and
// its level (depth below the root). A consumer's lookup is -ENOTSUPP, as the kernel's (no
// map_fd_sys_lookup_elem).
#pragma once

#include <cstdint>

#include "bpf/maps/fd_array.hpp"

namespace userperf::bpf {

// A stored cgroup. cgroup2 never moves a cgroup to another parent (rename keeps the parent), so
// its level is as fixed as its id.
struct CgroupRef {
  std::uint64_t id = 0;
  std::uint32_t level = 0;
};

// cgroup_get_from_fd, in user space: a descriptor (O_PATH too) of a directory on a cgroup2 mount
// becomes its id and level; anything else (a closed descriptor, a file, a cgroup v1 directory)
// is EBADF. The level is counted by walking ".." to the root cgroup (id 1) or, in a cgroup
// namespace, to the top of the mount.
Expected<CgroupRef> resolve_cgroup_fd(int fd);

class CgroupArray final : public FdArray {
 public:
  // `spec` has passed check_map_create(). The map resolves descriptors itself.
  static Expected<std::unique_ptr<Map>> create(const MapSpec& spec);

 private:
  using FdArray::FdArray;
};

}  // namespace userperf::bpf
