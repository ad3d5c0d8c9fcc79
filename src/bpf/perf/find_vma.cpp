#include "bpf/perf/find_vma.hpp"

#include <cerrno>
#include <cstring>

#include "bpf/perf/perf_event_ctx.hpp"
#include "support/proc_lines.hpp"
#include "support/task_ids.hpp"

namespace userperf::bpf {
namespace {

// include/linux/mm.h
constexpr std::uint64_t kVmRead = 0x1;
constexpr std::uint64_t kVmWrite = 0x2;
constexpr std::uint64_t kVmExec = 0x4;
constexpr std::uint64_t kVmShared = 0x8;
constexpr std::uint64_t kPageShift = 12;

std::uint64_t negative(int err) {
  return static_cast<std::uint64_t>(-static_cast<std::int64_t>(err));
}

// Parses a hex number at p; p moves past it.
std::uint64_t hex(const char*& p, const char* end) {
  std::uint64_t v = 0;
  for (; p < end; ++p) {
    const char c = *p;
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) break;
    v = v << 4 | static_cast<std::uint64_t>(d);
  }
  return v;
}

void skip_field(const char*& p, const char* end) {
  while (p < end && *p != ' ') ++p;
  while (p < end && *p == ' ') ++p;
}

// One line: "start-end perms offset dev inode   path". True when it holds addr (out filled).
bool parse_line(const char* p, const char* end, std::uint64_t addr, FoundVma& out) {
  const std::uint64_t start = hex(p, end);
  if (p >= end || *p != '-') return false;
  ++p;
  const std::uint64_t stop = hex(p, end);
  if (addr < start || addr >= stop) return false;
  while (p < end && *p == ' ') ++p;
  std::uint64_t flags = 0;
  if (end - p >= 4) {
    if (p[0] == 'r') flags |= kVmRead;
    if (p[1] == 'w') flags |= kVmWrite;
    if (p[2] == 'x') flags |= kVmExec;
    if (p[3] == 's') flags |= kVmShared;
  }
  skip_field(p, end);
  const std::uint64_t offset = hex(p, end);
  skip_field(p, end);                       // the offset's rest
  skip_field(p, end);                       // dev
  const std::uint64_t inode = hex(p, end);  // decimal digits read as hex: only zero matters
  while (p < end && *p == ' ') ++p;
  out.valid = true;
  out.start = start;
  out.end = stop;
  out.flags = flags;
  out.pgoff = offset >> kPageShift;
  // A file mapping has an inode and a path ("/..."); [heap], [stack], anonymous ones do not.
  out.has_file = inode != 0 && p < end && *p == '/';
  out.name[0] = '\0';
  if (out.has_file) {
    const char* base = p;
    for (const char* q = p; q < end; ++q) {
      if (*q == '/') base = q + 1;
    }
    const auto len = std::min<std::size_t>(static_cast<std::size_t>(end - base), kMaxVmaName - 1);
    std::memcpy(out.name, base, len);
    out.name[len] = '\0';
  }
  return true;
}

CallbackStep find_vma_begin(const std::uint64_t* args, void* env, CallbackState& state) {
  CallbackStep step;
  if (args[4] != 0) {
    step.result = negative(EINVAL);
    return step;
  }
  const std::uint64_t task = args[0];
  const auto tid = static_cast<std::uint32_t>(support::current_tid());
  const auto pid = static_cast<std::uint32_t>(support::current_pid());
  auto& ctx = *static_cast<PerfEventRunCtx*>(env);
  if (ctx.vma == nullptr ||
      (task != synthetic_task_address(tid) && task != synthetic_task_address(pid)) ||
      !find_mapping(args[1], *ctx.vma)) {
    step.result = negative(ENOENT);
    return step;
  }
  (void)state;
  step.call = true;
  step.args[0] = task;
  step.args[1] = synthetic_task_address(tid) + kTaskVmaOffset;
  step.args[2] = args[3];
  return step;
}

CallbackStep find_vma_resume(std::uint64_t, void*, CallbackState&) {
  return CallbackStep{};  // called once; the helper returns 0
}

constexpr CallbackDriver kFindVma{3, find_vma_begin, find_vma_resume};

}  // namespace

const CallbackDriver& find_vma_driver() {
  return kFindVma;
}

bool find_mapping(std::uint64_t addr, FoundVma& out) {
  // A line longer than the reader's window (a path near PATH_MAX) is parsed from its start, its
  // name cut at the window.
  bool found = false;
  support::for_each_proc_line("/proc/self/maps", [&](char* begin, char* end, bool) {
    found = parse_line(begin, end, addr, out);
    return found;
  });
  return found;
}

bool probe_read_synthetic(void* env, std::uint64_t addr, void* dst, std::uint64_t size) {
  auto& ctx = *static_cast<PerfEventRunCtx*>(env);
  const TaskReadContext read{ctx.task_layout, ctx.regs, ctx.vma};
  return read_synthetic_kernel(read, addr, dst, size) == 0;
}

}  // namespace userperf::bpf
