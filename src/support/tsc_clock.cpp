#include "support/tsc_clock.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstring>

#include "support/task_ids.hpp"

namespace userperf::support {

#if defined(__x86_64__)

namespace tsc_detail {
constinit Line g_line;
__attribute__((tls_model("initial-exec"))) constinit thread_local std::uint64_t t_last = 0;
}  // namespace tsc_detail

namespace {

using tsc_detail::clamp_to_last;
using tsc_detail::g_line;
using u128 = unsigned __int128;

enum Mode : std::uint32_t { kUnknown, kProbing, kNoTsc, kTsc };

constexpr std::uint64_t kFirstBaselineNs = 25'000;       // the first line: two pairs this far apart
constexpr std::uint64_t kMaxIntervalNs = 1'000'000'000;  // re-anchor at least this often
constexpr std::uint64_t kSlopeBaselineNs = 500'000'000;  // slope from the last anchor once this old
// A line that starts more than kSlewAfterNs above the calibration (it must not go below the old
// line) slews to it over at most kSlewNs, and is due for re-anchoring then: slewed over a whole
// interval (up to 1 s), the error settled where the slew balanced the slope's error,
// microseconds ahead of CLOCK_MONOTONIC under frequent re-anchors. Less above it, calibration
// noise: the line slews over its interval.
constexpr std::uint64_t kSlewNs = 10'000'000;
constexpr std::uint64_t kSlewAfterNs = 100;
constexpr int kBracketTries = 5;
constexpr int kReadTries = 4;

constinit std::atomic<std::uint32_t> g_mode{kUnknown};
constinit std::atomic<pid_t> g_lock{0};  // 0, or the pid of the process whose thread re-anchors

// A calibration point: the TSC at the middle of the narrowest bracket around clock_gettime.
struct Pair {
  std::uint64_t tsc = 0;
  std::uint64_t ns = 0;
};

// Touched only by the lock holder.
struct Calibration {
  bool have_line = false;
  Pair first;  // the first pair: the slope's base while the intervals ramp up
  Pair last;   // the pair of the last anchor
  std::uint64_t interval_ns = 0;
};
constinit Calibration g_cal;

// rdtsc that neither starts before earlier instructions finish nor lets later ones start early:
// the brackets around clock_gettime hold its own TSC read.
std::uint64_t ordered_tsc() {
  _mm_lfence();
  const std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

Pair measure() {
  Pair best;
  std::uint64_t best_width = ~std::uint64_t{0};
  for (int i = 0; i < kBracketTries; ++i) {
    const std::uint64_t before = ordered_tsc();
    const std::uint64_t ns = clock_gettime_ns(CLOCK_MONOTONIC);
    const std::uint64_t after = ordered_tsc();
    if (after - before < best_width) {
      best_width = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

// /proc/cpuinfo's first "flags" line has both constant_tsc and nonstop_tsc. Streams it through a
// small buffer (this may run in a signal handler, on a small alternate stack).
bool cpuinfo_has_invariant_tsc() {
  const int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  enum { kKey, kSkipLine, kFlags } phase = kKey;
  char token[64];
  std::size_t len = 0;
  bool overflow = false;
  bool constant = false;
  bool nonstop = false;
  bool done = false;
  char buf[512];
  while (!done) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n && !done; ++i) {
      const char ch = buf[i];
      if (phase == kSkipLine) {
        if (ch == '\n') phase = kKey, len = 0, overflow = false;
      } else if (phase == kKey) {
        if (ch == '\n') {
          len = 0, overflow = false;
        } else if (ch == ':') {
          while (len > 0 && (token[len - 1] == ' ' || token[len - 1] == '\t')) --len;
          const bool flags = !overflow && len == 5 && std::memcmp(token, "flags", 5) == 0;
          phase = flags ? kFlags : kSkipLine;
          len = 0, overflow = false;
        } else if (len < sizeof token) {
          token[len++] = ch;
        } else {
          overflow = true;
        }
      } else {  // kFlags: space-separated tokens up to the end of the line
        if (ch == ' ' || ch == '\n') {
          if (!overflow && len == 12 && std::memcmp(token, "constant_tsc", 12) == 0)
            constant = true;
          if (!overflow && len == 11 && std::memcmp(token, "nonstop_tsc", 11) == 0) nonstop = true;
          len = 0, overflow = false;
          if (ch == '\n') done = true;
        } else if (len < sizeof token) {
          token[len++] = ch;
        } else {
          overflow = true;
        }
      }
    }
  }
  close(fd);
  return constant && nonstop;
}

void begin_write() {
  g_line.seq.fetch_add(1, std::memory_order_acq_rel);
}
void end_write() {
  g_line.seq.fetch_add(1, std::memory_order_release);
}

// The lock of the re-anchor. A holder of another pid is a thread of the parent that was
// re-anchoring when this process forked: it will never release the lock here, so the caller takes
// it over, and the line it may have left half written is withdrawn (calibration starts afresh).
bool try_lock() {
  const pid_t me = current_pid();
  pid_t seen = 0;
  if (g_lock.compare_exchange_strong(seen, me, std::memory_order_acquire)) return true;
  if (seen == me) return false;  // another thread, or the code this signal handler interrupted
  if (!g_lock.compare_exchange_strong(seen, me, std::memory_order_acquire)) return false;
  if (g_line.seq.load(std::memory_order_relaxed) & 1) {
    g_line.due.store(0, std::memory_order_release);
    g_line.generation.fetch_add(1, std::memory_order_release);
    end_write();
  }
  g_cal = Calibration{};
  return true;
}

void unlock() {
  g_lock.store(0, std::memory_order_release);
}

struct LineView {
  std::uint64_t zero, anchor, due, generation;
  std::uint32_t mult, shift;
};

// The line under its seqcount: false when it was being written on every attempt.
bool read_line(LineView& v) {
  for (int i = 0; i < kReadTries; ++i) {
    const std::uint32_t seq = g_line.seq.load(std::memory_order_acquire);
    if (seq & 1) continue;
    v.zero = g_line.zero.load(std::memory_order_acquire);
    v.mult = g_line.mult.load(std::memory_order_acquire);
    v.shift = g_line.shift.load(std::memory_order_acquire);
    v.anchor = g_line.anchor.load(std::memory_order_acquire);
    v.due = g_line.due.load(std::memory_order_acquire);
    v.generation = g_line.generation.load(std::memory_order_acquire);
    if (g_line.seq.load(std::memory_order_relaxed) == seq) return true;
  }
  return false;
}

// How long past its anchor a line may be used (1.5 intervals): the limit of a reading that cannot
// re-anchor, and the highest point of the old line a new one must start above.
std::uint64_t valid_cycles(std::uint64_t due) {
  return due + due / 2;
}

// Publishes a line through `p` whose slope is measured from `base`, to be re-anchored after
// `interval_ns`. Returns the line's value at its anchor, or 0 when the pairs make no sense.
std::uint64_t publish(const Pair& p, const Pair& base, std::uint64_t interval_ns, bool have_old) {
  const std::uint64_t dn = p.ns - base.ns;
  const std::uint64_t dc = p.tsc - base.tsc;
  if (p.ns <= base.ns || p.tsc <= base.tsc) return 0;
  // ns per cycle between 1/20 (a 20 GHz TSC) and 10 (100 MHz): anything else is not a TSC
  // ticking at a constant rate against CLOCK_MONOTONIC.
  if (dn * 20 < dc || dn > dc * 10) return 0;
  unsigned shift = 32;
  while (shift > 0 && ((u128{dn} << shift) / dc) >= (u128{1} << 32)) --shift;
  const auto mult_cal = static_cast<std::uint64_t>((u128{dn} << shift) / dc);
  const auto interval_cycles = static_cast<std::uint64_t>(u128{interval_ns} * dc / dn);
  if (interval_cycles == 0 || mult_cal == 0) return 0;

  begin_write();
  const std::uint64_t anchor = ordered_tsc();
  const std::uint64_t cal =
      p.ns + static_cast<std::uint64_t>(u128{anchor - p.tsc} * dn / dc);  // anchor >= p.tsc
  std::uint64_t start = cal;
  if (have_old) {
    // The highest value the old line could have given: at the anchor, or at its validity's end.
    const std::uint64_t old_anchor = g_line.anchor.load(std::memory_order_relaxed);
    const std::uint64_t old_valid = valid_cycles(g_line.due.load(std::memory_order_relaxed));
    const std::uint64_t at = anchor - old_anchor < old_valid ? anchor : old_anchor + old_valid;
    const std::uint64_t old_top =
        tsc_to_ns(at, g_line.zero.load(std::memory_order_relaxed),
                  g_line.mult.load(std::memory_order_relaxed),
                  static_cast<std::uint16_t>(g_line.shift.load(std::memory_order_relaxed)));
    if (old_top > start) start = old_top;
  }
  std::uint64_t mult = mult_cal;
  std::uint64_t due_cycles = interval_cycles;
  if (start > cal) {
    // Slew: from `start` to the calibrated line's value one horizon later, never slower than
    // half the calibrated rate, and re-anchor then (the next line slews the rest).
    const std::uint64_t horizon_ns =
        start - cal > kSlewAfterNs && interval_ns > kSlewNs ? kSlewNs : interval_ns;
    due_cycles = static_cast<std::uint64_t>(u128{horizon_ns} * dc / dn);
    if (due_cycles == 0) due_cycles = 1;
    const std::uint64_t target = cal + horizon_ns;
    std::uint64_t rise = target > start ? target - start : 0;
    if (rise < horizon_ns / 2) rise = horizon_ns / 2;
    mult = static_cast<std::uint64_t>((u128{rise} << shift) / due_cycles);
    if (mult > mult_cal) mult = mult_cal;
    if (mult == 0) mult = 1;
  }
  const auto shift16 = static_cast<std::uint16_t>(shift);
  const std::uint64_t zero =
      start - tsc_to_ns(anchor, 0, static_cast<std::uint32_t>(mult), shift16);
  g_line.zero.store(zero, std::memory_order_release);
  g_line.mult.store(static_cast<std::uint32_t>(mult), std::memory_order_release);
  g_line.shift.store(shift, std::memory_order_release);
  g_line.anchor.store(anchor, std::memory_order_release);
  g_line.due.store(due_cycles, std::memory_order_release);
  g_line.generation.fetch_add(1, std::memory_order_release);
  end_write();
  return start;
}

// Under the lock: the first line, or a re-anchor. Returns a CLOCK_MONOTONIC reading for the
// caller (the new line's value at its anchor, or clock_gettime's when nothing was published).
std::uint64_t reanchor() {
  Calibration& c = g_cal;
  const Pair p = measure();
  if (!c.have_line) {
    Pair q = p;
    for (int i = 0; i < 100'000 && q.ns - p.ns < kFirstBaselineNs; ++i) q = measure();
    const std::uint64_t v = publish(q, p, q.ns - p.ns, false);
    if (v == 0) {
      g_mode.store(kNoTsc, std::memory_order_release);
      return q.ns;
    }
    c = {true, p, q, q.ns - p.ns};
    return v;
  }
  const Pair& base = p.ns - c.last.ns >= kSlopeBaselineNs ? c.last : c.first;
  const std::uint64_t interval =
      c.interval_ns * 2 < kMaxIntervalNs ? c.interval_ns * 2 : kMaxIntervalNs;
  const std::uint64_t v = publish(p, base, interval, true);
  if (v == 0) return p.ns;  // the line stays; readings past its validity read clock_gettime
  if (&base == &c.last) c.first = c.last;  // the older base is no longer needed
  c.last = p;
  c.interval_ns = interval;
  return v;
}

bool probe() {
  std::uint32_t mode = kUnknown;
  if (!g_mode.compare_exchange_strong(mode, kProbing, std::memory_order_acq_rel)) {
    return mode == kTsc;
  }
  const bool tsc = cpuinfo_has_invariant_tsc();
  g_mode.store(tsc ? kTsc : kNoTsc, std::memory_order_release);
  return tsc;
}

}  // namespace

std::uint64_t tsc_detail::slow_now() {
  const std::uint32_t mode = g_mode.load(std::memory_order_acquire);
  if (mode == kNoTsc) return clock_gettime_ns(CLOCK_MONOTONIC);
  if (mode != kTsc && !probe()) return clamp_to_last(clock_gettime_ns(CLOCK_MONOTONIC));
  LineView v{};
  if (try_lock()) {
    std::uint64_t ns = 0;
    // Another thread may have re-anchored between the caller's reading and the lock.
    const std::uint64_t cyc = read_tsc();
    if (read_line(v) && v.due != 0 && cyc - v.anchor < v.due) {
      ns = tsc_to_ns(cyc, v.zero, v.mult, static_cast<std::uint16_t>(v.shift));
    } else {
      ns = reanchor();
    }
    unlock();
    return clamp_to_last(ns);
  }
  // Busy (another thread re-anchors, or this handler interrupted a re-anchor): the line if it is
  // still valid, else clock_gettime.
  if (read_line(v) && v.due != 0) {
    const std::uint64_t cyc = read_tsc();
    if (cyc - v.anchor < valid_cycles(v.due)) {
      return clamp_to_last(tsc_to_ns(cyc, v.zero, v.mult, static_cast<std::uint16_t>(v.shift)));
    }
  }
  return clamp_to_last(clock_gettime_ns(CLOCK_MONOTONIC));
}

bool tsc_clock_in_use() {
  (void)tsc_now();
  std::uint32_t mode;
  while ((mode = g_mode.load(std::memory_order_acquire)) == kProbing) sched_yield();
  if (mode != kTsc) return false;
  TscConversion conversion;
  for (int i = 0; i < 1000 && !tsc_conversion(conversion); ++i) {
    sched_yield();
    (void)tsc_now();
  }
  return g_mode.load(std::memory_order_acquire) == kTsc && tsc_conversion(conversion);
}

bool tsc_reanchor() {
  if (g_mode.load(std::memory_order_acquire) != kTsc) return false;
  if (!try_lock()) return false;
  const std::uint64_t before = g_line.generation.load(std::memory_order_relaxed);
  (void)reanchor();
  const bool done = g_line.generation.load(std::memory_order_relaxed) != before;
  unlock();
  return done;
}

TscConversionStatus tsc_read_conversion(TscConversion& out) {
  if (g_mode.load(std::memory_order_acquire) != kTsc) return TscConversionStatus::kUnavailable;
  LineView v{};
  if (!read_line(v)) return TscConversionStatus::kBusy;
  if (v.due == 0) return TscConversionStatus::kUnavailable;
  out = {v.zero, v.mult, static_cast<std::uint16_t>(v.shift), v.generation};
  return TscConversionStatus::kOk;
}

#else

bool tsc_clock_in_use() {
  return false;
}
bool tsc_reanchor() {
  return false;
}
bool tsc_conversion(TscConversion&) {
  return false;
}

#endif

}  // namespace userperf::support
