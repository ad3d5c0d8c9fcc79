#include "bpf/maps/cgroup_array.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>

namespace userperf::bpf {

namespace {

constexpr std::uint64_t kRootCgroupId = 1;  // kernfs gives the root cgroup the first id

bool on_cgroup2(int fd, struct stat& st) {
  struct statfs fs;
  return fstatfs(fd, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC && fstat(fd, &st) == 0;
}

// The slots' objects: one CgroupRef per cgroup id ever stored, kept until the map goes. A helper
// may still read a record a consumer has just replaced (the kernel keeps a replaced cgroup until an
// RCU grace period ends), so records are never freed while the map lives; interning them by id
// bounds their number by the distinct cgroups stored, not by the updates.
class CgroupResolver final : public FdResolver {
 public:
  Expected<void*> get(int fd) override {
    Expected<CgroupRef> ref = resolve_cgroup_fd(fd);
    if (!ref) return ref.error();
    std::lock_guard<std::mutex> lock(mutex_);
    auto [at, added] = records_.try_emplace(ref.value().id, nullptr);
    if (added) at->second = std::make_unique<CgroupRef>(ref.value());
    return static_cast<void*>(at->second.get());
  }
  void put(void* object) override { (void)object; }

 private:
  std::mutex mutex_;  // consumer side only: helpers read records, never this table
  std::map<std::uint64_t, std::unique_ptr<CgroupRef>> records_;
};

}  // namespace

Expected<CgroupRef> resolve_cgroup_fd(int fd) {
  struct stat st;
  if (!on_cgroup2(fd, st) || !S_ISDIR(st.st_mode)) {
    return make_error(EBADF, "descriptor " + std::to_string(fd) + " is no cgroup v2 directory");
  }
  CgroupRef ref{static_cast<std::uint64_t>(st.st_ino), 0};
  int at = fd;
  for (std::uint64_t id = ref.id; id != kRootCgroupId;) {
    const int parent = openat(at, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (at != fd) close(at);
    if (parent < 0) return make_error(errno, "cannot open the parent of a cgroup");
    struct stat parent_st;
    // Past the top of the mount (a cgroup namespace's root): ".." left the cgroup2 file system.
    if (!on_cgroup2(parent, parent_st) || parent_st.st_dev != st.st_dev || parent_st.st_ino == id) {
      close(parent);
      return ref;
    }
    ++ref.level;
    id = static_cast<std::uint64_t>(parent_st.st_ino);
    at = parent;
  }
  if (at != fd) close(at);
  return ref;
}

Expected<std::unique_ptr<Map>> CgroupArray::create(const MapSpec& spec) {
  auto slots = allocate_slots(spec);
  if (!slots) return slots.error();
  return std::unique_ptr<Map>(
      new CgroupArray(spec, std::make_shared<CgroupResolver>(), std::move(slots.value())));
}

}  // namespace userperf::bpf
