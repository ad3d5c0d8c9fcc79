// SIGNAL-SAFE: see base_helpers.hpp.
#include "bpf/runtime/base_helpers.hpp"

#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "bpf/isa/int_types.hpp"
#include "bpf/maps/map.hpp"
#include "bpf/maps/ringbuf_map.hpp"
#include "bpf/runtime/trace_printk.hpp"
#include "support/task_ids.hpp"
#include "support/user_memory.hpp"

namespace userperf::bpf {

namespace {

std::atomic<int> g_trace_fd{STDERR_FILENO};

u64 clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<u64>(ts.tv_sec) * 1'000'000'000u + static_cast<u64>(ts.tv_nsec);
}

// ---- maps: r1 is the Map the fixed-up lddw loaded.

u64 map_lookup_elem(u64 map, u64 key, u64, u64, u64, CallContext& call) {
  auto* m = static_cast<Map*>(helper_ptr(map));
  if (!call.may_access(key, m->spec().key_size, false)) return 0;
  return reinterpret_cast<u64>(m->lookup(helper_ptr(key)));
}

u64 map_update_elem(u64 map, u64 key, u64 value, u64 flags, u64, CallContext& call) {
  auto* m = static_cast<Map*>(helper_ptr(map));
  if (!call.may_access(key, m->spec().key_size, false) ||
      !call.may_access(value, m->spec().value_size, false)) {
    return helper_error(EFAULT);
  }
  return static_cast<u64>(m->update(helper_ptr(key), helper_ptr(value), flags));
}

u64 map_delete_elem(u64 map, u64 key, u64, u64, u64, CallContext& call) {
  auto* m = static_cast<Map*>(helper_ptr(map));
  if (!call.may_access(key, m->spec().key_size, false)) return helper_error(EFAULT);
  return static_cast<u64>(m->remove(helper_ptr(key)));
}

// ---- ring buffers (kernel/bpf/ringbuf.c): the verifier proved r1 a RINGBUF map and a
// sample a record reserve returned, released once.

u64 ringbuf_output(u64 map, u64 data, u64 size, u64 flags, u64, CallContext& call) {
  if (flags & ~u64{BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP}) return helper_error(EINVAL);
  if (!call.may_access(data, size, false)) return helper_error(EFAULT);
  void* rec = static_cast<RingbufMap*>(helper_ptr(map))->reserve(size);
  if (rec == nullptr) return helper_error(EAGAIN);
  std::memcpy(rec, helper_ptr(data), size);
  RingbufMap::commit(rec, flags, false);
  return 0;
}

u64 ringbuf_reserve(u64 map, u64 size, u64 flags, u64, u64, CallContext&) {
  if (flags != 0) return 0;
  return reinterpret_cast<u64>(static_cast<RingbufMap*>(helper_ptr(map))->reserve(size));
}

u64 ringbuf_submit(u64 sample, u64 flags, u64, u64, u64, CallContext&) {
  RingbufMap::commit(helper_ptr(sample), flags, false);
  return 0;
}

u64 ringbuf_discard(u64 sample, u64 flags, u64, u64, u64, CallContext&) {
  RingbufMap::commit(helper_ptr(sample), flags, true);
  return 0;
}

u64 ringbuf_query(u64 map, u64 flags, u64, u64, u64, CallContext&) {
  return static_cast<RingbufMap*>(helper_ptr(map))->query(flags);
}

// bpf_tail_call reaches the table only when a program runs without the interpreter's tail-call
// resolver (LoadedProgram always sets it): end the run, so the mistake shows as a fault.
u64 tail_call_unresolved(u64, u64, u64, u64, u64, CallContext& call) {
  call.abort = true;
  return helper_error(EINVAL);
}

// bpf_loop is the interpreter's own (its LOOP op calls the callback); programs with callbacks
// never run on the JIT. Reaching the table is a mistake: end the run, so it shows as a fault.
u64 loop_unresolved(u64, u64, u64, u64, u64, CallContext& call) {
  call.abort = true;
  return helper_error(EINVAL);
}

// ---- memory: a bad source address is an error, never a fault; dst is zeroed on error.

}  // namespace

u64 probe_read_user(u64 dst, u64 size, u64 src, u64, u64, CallContext& call) {
  if (!call.may_access(dst, size, true)) return helper_error(EFAULT);
  if (!support::read_user(helper_ptr(src), helper_ptr(dst), size)) {
    std::memset(helper_ptr(dst), 0, size);
    return helper_error(EFAULT);
  }
  return 0;
}

u64 probe_read_user_str(u64 dst, u64 size, u64 src, u64, u64, CallContext& call) {
  if (!call.may_access(dst, size, true)) return helper_error(EFAULT);
  const long n =
      support::read_user_string(helper_ptr(src), static_cast<char*>(helper_ptr(dst)), size);
  if (n < 0) std::memset(helper_ptr(dst), 0, size);
  return static_cast<u64>(n);
}

namespace {

// ---- time, CPU, task.

u64 ktime_get_ns(u64, u64, u64, u64, u64, CallContext&) {
  return clock_ns(CLOCK_MONOTONIC);
}
u64 ktime_get_boot_ns(u64, u64, u64, u64, u64, CallContext&) {
  return clock_ns(CLOCK_BOOTTIME);
}
u64 ktime_get_coarse_ns(u64, u64, u64, u64, u64, CallContext&) {
  return clock_ns(CLOCK_MONOTONIC_COARSE);
}

u64 ktime_get_tai_ns(u64, u64, u64, u64, u64, CallContext&) {
  return clock_ns(CLOCK_TAI);
}

// jiffies: the coarse monotonic clock counted in scheduler ticks (its resolution is one tick).
u64 jiffies64(u64, u64, u64, u64, u64, CallContext&) {
  static const u64 tick_ns = [] {
    timespec res{};
    clock_getres(CLOCK_MONOTONIC_COARSE, &res);
    const u64 ns = static_cast<u64>(res.tv_sec) * 1'000'000'000u + static_cast<u64>(res.tv_nsec);
    return ns != 0 ? ns : 4'000'000u;
  }();
  return clock_ns(CLOCK_MONOTONIC_COARSE) / tick_ns;
}

u64 get_smp_processor_id(u64, u64, u64, u64, u64, CallContext&) {
  return current_cpu();
}

u64 get_numa_node_id(u64, u64, u64, u64, u64, CallContext&) {
  unsigned cpu = 0;
  unsigned node = 0;
  return getcpu(&cpu, &node) == 0 ? node : 0;
}

u64 get_current_pid_tgid(u64, u64, u64, u64, u64, CallContext&) {
  return (static_cast<u64>(support::current_pid()) << 32) |
         static_cast<std::uint32_t>(support::current_tid());
}

u64 get_current_uid_gid(u64, u64, u64, u64, u64, CallContext&) {
  return (static_cast<u64>(getgid()) << 32) | getuid();
}

// strscpy_pad of the thread's name: NUL-terminated, the rest of buf zeroed.
u64 get_current_comm(u64 buf, u64 size, u64, u64, u64, CallContext& call) {
  if (!call.may_access(buf, size, true)) return helper_error(EFAULT);
  char comm[16] = {};
  prctl(PR_GET_NAME, comm);
  auto* out = static_cast<char*>(helper_ptr(buf));
  std::memset(out, 0, size);
  if (size > 0) std::memcpy(out, comm, std::min<std::size_t>(std::strlen(comm), size - 1));
  return 0;
}

// A per-thread xorshift64* generator seeded from the clock and the thread.
thread_local u64 t_random_state = 0;

u64 get_prandom_u32(u64, u64, u64, u64, u64, CallContext&) {
  if (t_random_state == 0) {
    t_random_state = clock_ns(CLOCK_MONOTONIC) ^ (static_cast<u64>(support::current_tid()) << 32) ^
                     0x9e3779b97f4a7c15ull;
  }
  t_random_state ^= t_random_state >> 12;
  t_random_state ^= t_random_state << 25;
  t_random_state ^= t_random_state >> 27;
  return (t_random_state * 0x2545f4914f6cdd1dull) >> 32;
}

// ---- trace_printk: one line per call on the trace descriptor, as trace_pipe shows it.

void append(char* line, std::size_t& len, std::size_t cap, const char* s, std::size_t n) {
  for (std::size_t i = 0; i < n && len < cap; ++i) line[len++] = s[i];
}

void append_number(char* line, std::size_t& len, std::size_t cap, u64 v, int min_digits) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 || n < min_digits);
  while (n > 0 && len < cap) line[len++] = digits[--n];
}

u64 trace_printk(u64 fmt, u64 fmt_size, u64 a1, u64 a2, u64 a3, CallContext& call) {
  if (!call.may_access(fmt, fmt_size, false)) return helper_error(EFAULT);
  char msg[512];
  const u64 args[3] = {a1, a2, a3};
  const long n = format_trace_printk(static_cast<const char*>(helper_ptr(fmt)),
                                     static_cast<std::uint32_t>(fmt_size), args, msg, sizeof msg);
  if (n < 0) return static_cast<u64>(n);
  char comm[16] = {};
  prctl(PR_GET_NAME, comm);
  char line[640];
  std::size_t len = 0;
  constexpr std::size_t cap = sizeof line - 1;
  const u64 now = clock_ns(CLOCK_MONOTONIC);
  append(line, len, cap, comm, std::strlen(comm));
  append(line, len, cap, "-", 1);
  append_number(line, len, cap, static_cast<u64>(support::current_tid()), 1);
  append(line, len, cap, " [", 2);
  append_number(line, len, cap, current_cpu(), 3);
  append(line, len, cap, "] ", 2);
  append_number(line, len, cap, now / 1'000'000'000u, 1);
  append(line, len, cap, ".", 1);
  append_number(line, len, cap, now % 1'000'000'000u / 1000u, 6);
  append(line, len, cap, ": bpf_trace_printk: ", 20);
  append(line, len, cap, msg, static_cast<std::size_t>(n));
  if (n == 0 || msg[n - 1] != '\n') line[len++] = '\n';
  const ssize_t written = write(g_trace_fd.load(std::memory_order_relaxed), line, len);
  (void)written;  // the kernel's trace buffer drops silently when full; so does a full pipe
  return static_cast<u64>(n);
}

}  // namespace

void set_trace_printk_fd(int fd) {
  g_trace_fd.store(fd, std::memory_order_relaxed);
}

void add_base_helpers(std::vector<HelperFn>& table) {
  set_helper(table, BPF_FUNC_map_lookup_elem, map_lookup_elem);
  set_helper(table, BPF_FUNC_map_update_elem, map_update_elem);
  set_helper(table, BPF_FUNC_map_delete_elem, map_delete_elem);
  set_helper(table, BPF_FUNC_tail_call, tail_call_unresolved);
  set_helper(table, BPF_FUNC_loop, loop_unresolved);
  // Kernel memory (probe_read_kernel, the legacy probe_read above TASK_SIZE) is the synthetic
  // task of perf/current_task.hpp: those helpers are perf's.
  set_helper(table, BPF_FUNC_probe_read_user, probe_read_user);
  set_helper(table, BPF_FUNC_probe_read_user_str, probe_read_user_str);
  set_helper(table, BPF_FUNC_ktime_get_ns, ktime_get_ns);
  set_helper(table, BPF_FUNC_ktime_get_boot_ns, ktime_get_boot_ns);
  set_helper(table, BPF_FUNC_ktime_get_coarse_ns, ktime_get_coarse_ns);
  set_helper(table, BPF_FUNC_ktime_get_tai_ns, ktime_get_tai_ns);
  set_helper(table, BPF_FUNC_jiffies64, jiffies64);
  set_helper(table, BPF_FUNC_get_smp_processor_id, get_smp_processor_id);
  set_helper(table, BPF_FUNC_get_numa_node_id, get_numa_node_id);
  set_helper(table, BPF_FUNC_get_current_pid_tgid, get_current_pid_tgid);
  set_helper(table, BPF_FUNC_get_current_uid_gid, get_current_uid_gid);
  set_helper(table, BPF_FUNC_get_current_comm, get_current_comm);
  set_helper(table, BPF_FUNC_get_prandom_u32, get_prandom_u32);
  set_helper(table, BPF_FUNC_trace_printk, trace_printk);
  set_helper(table, BPF_FUNC_ringbuf_output, ringbuf_output);
  set_helper(table, BPF_FUNC_ringbuf_reserve, ringbuf_reserve);
  set_helper(table, BPF_FUNC_ringbuf_submit, ringbuf_submit);
  set_helper(table, BPF_FUNC_ringbuf_discard, ringbuf_discard);
  set_helper(table, BPF_FUNC_ringbuf_query, ringbuf_query);
}

}  // namespace userperf::bpf
