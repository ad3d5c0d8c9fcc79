// SIGNAL-SAFE: see current_cgroup.hpp.
#include "bpf/perf/current_cgroup.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <limits>

#include "support/proc_lines.hpp"

namespace userperf::bpf {

namespace {

constexpr int kUnknown = -2;
constexpr int kNoMount = -1;
std::atomic<int> g_root_fd{kUnknown};  // an O_PATH descriptor of the cgroup2 mount's root

// Decodes mountinfo's octal escapes (\040 for a space) in place.
void unescape(char* s) {
  char* out = s;
  for (const char* in = s; *in != '\0'; ++in) {
    if (in[0] == '\\' && in[1] >= '0' && in[1] <= '7' && in[2] >= '0' && in[2] <= '7' &&
        in[3] >= '0' && in[3] <= '7') {
      *out++ = static_cast<char>((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
      in += 3;
    } else {
      *out++ = *in;
    }
  }
  *out = '\0';
}

// One mountinfo line: "id parent major:minor root mount-point options... - fstype source ...".
// Opens the mount point when the line is a cgroup2 mount of the hierarchy's root.
int open_if_cgroup2_root(char* line) {
  char* fields[5] = {};
  char* p = line;
  for (int i = 0; i < 5; ++i) {
    while (*p == ' ') ++p;
    if (*p == '\0') return -1;
    fields[i] = p;
    while (*p != ' ' && *p != '\0') ++p;
    if (*p == '\0') return -1;
    *p++ = '\0';
  }
  const char* separator = std::strstr(p, " - cgroup2 ");
  if (separator == nullptr || std::strcmp(fields[3], "/") != 0) return -1;
  unescape(fields[4]);
  const int fd = open(fields[4], O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct statfs fs;
  if (fd >= 0 && (fstatfs(fd, &fs) != 0 || fs.f_type != CGROUP2_SUPER_MAGIC)) {
    close(fd);
    return -1;
  }
  return fd;
}

// The first cgroup2 mount of the root in /proc/self/mountinfo, read a block at a time into a stack
// buffer (a line longer than the buffer is skipped).
int find_cgroup2_root() {
  int found = kNoMount;
  support::for_each_proc_line("/proc/self/mountinfo", [&](char* line, char*, bool cut) {
    if (!cut) found = open_if_cgroup2_root(line);  // a cut line is no whole mount entry
    return found >= 0;
  });
  return found >= 0 ? found : kNoMount;
}

}  // namespace

// Found once per process; racing finders keep the first descriptor published and close theirs.
int cgroup2_root_fd() {
  int fd = g_root_fd.load(std::memory_order_acquire);
  if (fd != kUnknown) return fd;
  const int mine = find_cgroup2_root();
  if (g_root_fd.compare_exchange_strong(fd, mine, std::memory_order_acq_rel)) return mine;
  if (mine >= 0) close(mine);
  return fd;
}

namespace {

// The thread's cgroup path: /proc/thread-self/cgroup's "0::" line, in `buf`; nullptr when it
// cannot be read or is outside the thread's cgroup namespace ("/.." components).
char* read_thread_cgroup(char* buf, std::size_t size) {
  const int fd = open("/proc/thread-self/cgroup", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  std::size_t have = 0;
  for (ssize_t n; have < size - 1 && (n = read(fd, buf + have, size - 1 - have)) > 0;) {
    have += static_cast<std::size_t>(n);
  }
  close(fd);
  buf[have] = '\0';
  char* line = buf;
  while (std::strncmp(line, "0::", 3) != 0) {
    line = std::strchr(line, '\n');
    if (line == nullptr) return nullptr;
    ++line;
  }
  char* path = line + 3;
  char* end = std::strchr(path, '\n');
  if (end == nullptr) return nullptr;  // cut short by the buffer
  *end = '\0';
  if (path[0] != '/') return nullptr;
  for (const char* dots = path; (dots = std::strstr(dots, "/..")) != nullptr; dots += 3) {
    if (dots[3] == '/' || dots[3] == '\0') return nullptr;  // a ".." component, not "..name"
  }
  return path;
}

// The id of the ancestor at `level` of the cgroup at `path` ("/a/b": a is level 1, b level 2),
// std::numeric_limits<uint64_t>::max() meaning the cgroup itself; 0 when it has no such level or
// its directory cannot be found. `path` is cut at that level.
std::uint64_t ancestor_id(char* path, std::uint64_t level) {
  const int root = cgroup2_root_fd();
  if (root < 0) return 0;
  char* end = path;  // end of the prefix of `level` components
  for (std::uint64_t at = 0; at < level; ++at) {
    if (end[0] != '/' || end[1] == '\0') {
      if (level == std::numeric_limits<std::uint64_t>::max()) break;
      return 0;  // shallower than `level`
    }
    end = std::strchr(end + 1, '/');
    if (end == nullptr) end = path + std::strlen(path);
  }
  *end = '\0';
  struct stat st;
  const char* relative = path[0] == '/' ? path + 1 : path;
  const int err = relative[0] == '\0' ? fstatat(root, "", &st, AT_EMPTY_PATH)
                                      : fstatat(root, relative, &st, AT_SYMLINK_NOFOLLOW);
  if (err != 0 || !S_ISDIR(st.st_mode)) return 0;
  return static_cast<std::uint64_t>(st.st_ino);
}

std::uint64_t thread_ancestor_id(std::uint64_t level) {
  char buf[4096];  // one "0::/path" line, after the v1 hierarchies' on a hybrid system
  char* path = read_thread_cgroup(buf, sizeof buf);
  return path == nullptr ? 0 : ancestor_id(path, level);
}

}  // namespace

std::uint64_t current_cgroup_id() {
  return thread_ancestor_id(std::numeric_limits<std::uint64_t>::max());
}

std::uint64_t current_ancestor_cgroup_id(std::int32_t level) {
  if (level < 0) return 0;  // cgroup_ancestor: no such level
  return thread_ancestor_id(static_cast<std::uint64_t>(level));
}

bool current_under_cgroup(const CgroupRef& cgroup) {
  const std::uint64_t id = thread_ancestor_id(cgroup.level);
  return id != 0 && id == cgroup.id;
}

}  // namespace userperf::bpf
