// The calltrace format: one thread's function entries and exits, in 8-byte little-endian units.
// The top two bits of every unit say what it is, so a window that starts anywhere (mid-stream, at
// an entry's second unit) resynchronises at its first event or sync unit:
//
//   00  padding: the whole unit is zero (any other unit with tag 00 is corrupt)
//   11  SYNC          bits 61..0  timestamp, ns (the event's clock: CLOCK_MONOTONIC by default)
//   01  EVENT         bit 61      1 = exit, 0 = enter
//                     bit 60      1 = a CONTINUATION unit follows
//                     bits 59..48 time since the last SYNC, low 12 bits
//                     bits 47..0  function address
//   10  CONTINUATION  bits 61..48 time since the last SYNC, bits 25..12
//                     bits 47..0  call site (0 = unknown)
//
// An event's time is the last SYNC's timestamp plus its delta. The encoder writes a SYNC before an
// event when the stream has none yet (or lost one), when the delta no longer fits in 26 bits (12
// for an event without a call site, which would otherwise need a continuation unit), and every
// kSyncInterval bytes, so that a short window holds one. Enters with a call site take 16
// bytes, exits (whose call site is the enter's) and enters without one 8, plus a SYNC now and then.
// Addresses are 48-bit (user space on x86-64 and arm64).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "trace/aux_decoder.hpp"
#include "trace/words.hpp"

namespace userperf::trace {

struct CallEvent {
  bool exit = false;
  std::uint64_t function = 0;
  std::uint64_t call_site = 0;  // 0 when unknown (exits, enters without one)
  std::uint64_t time = 0;       // ns; valid when `timed`
  bool timed = false;           // false before the window's first SYNC
  std::uint64_t offset = 0;     // byte offset of the event's first unit in the window
};

// The unit layout above, shared by the encoder (inline: it is on every traced call) and the
// decoder.
namespace calltrace_units {
constexpr std::uint64_t kTagSync = 3;
constexpr std::uint64_t kTagEvent = 1;
constexpr std::uint64_t kTagContinuation = 2;
constexpr unsigned kTagShift = 62;
constexpr std::uint64_t kAddressMask = (std::uint64_t{1} << 48) - 1;
constexpr std::uint64_t kTimeMask = (std::uint64_t{1} << 62) - 1;
constexpr std::uint64_t kExitBit = std::uint64_t{1} << 61;
constexpr std::uint64_t kContinuedBit = std::uint64_t{1} << 60;
constexpr unsigned kDeltaShift = 48;
constexpr unsigned kLowDeltaBits = 12;
constexpr unsigned kHighDeltaBits = 14;
constexpr std::uint64_t kLowDeltaLimit = std::uint64_t{1} << kLowDeltaBits;
constexpr std::uint64_t kDeltaLimit = std::uint64_t{1} << (kLowDeltaBits + kHighDeltaBits);
}  // namespace calltrace_units

// One entry as the source stores it: up to three units, never split.
struct CallEntry {
  std::uint64_t units[3] = {};
  std::size_t bytes = 0;
  bool has_sync = false;
  std::uint64_t sync_time = 0;
};

class CalltraceEncoder {
 public:
  static constexpr std::uint64_t kSyncInterval = 512;  // bytes between SYNC units, at most

  // The entry for one event at time `now`. The encoder's state moves only on commit(), called
  // once the entry is stored; an entry that was dropped is simply not committed.
  CallEntry encode(bool exit, std::uint64_t function, std::uint64_t call_site,
                   std::uint64_t now) const;
  void commit(const CallEntry& entry) {
    if (entry.has_sync) {
      sync_time_ = entry.sync_time;
      since_sync_ = 0;
    }
    since_sync_ += entry.bytes;
  }
  // The next entry starts with a SYNC (after a gap in the stream).
  void reset() { since_sync_ = kSyncInterval; }

 private:
  std::uint64_t sync_time_ = 0;
  // Bytes written since the last SYNC; kSyncInterval (a SYNC is due) before the first one and
  // after a gap.
  std::uint64_t since_sync_ = kSyncInterval;
};

// Inline and branch-light (the units are selected, not written conditionally): the calltrace
// source encodes one entry per instrumented function entry and exit.
inline CallEntry CalltraceEncoder::encode(bool exit, std::uint64_t function,
                                          std::uint64_t call_site, std::uint64_t now) const {
  using namespace calltrace_units;
  // An exit's call site is its enter's: leaving it out keeps exits to one unit.
  const std::uint64_t site = exit ? 0 : call_site & kAddressMask;
  // Unsigned: a clock that went back (now < sync_time_) gives a huge distance, hence a SYNC. An
  // event without a call site whose delta outgrew 12 bits takes a SYNC rather than a continuation:
  // the same 16 bytes, and the events after it fit in one unit again.
  const std::uint64_t since = now - sync_time_;
  const bool sync =
      since >= (site != 0 ? kDeltaLimit : kLowDeltaLimit) || since_sync_ >= kSyncInterval;
  const std::uint64_t delta = sync ? 0 : since;
  // Without a call site the delta fits in the event unit (else a SYNC was taken just above).
  const bool continued = site != 0;
  const std::uint64_t event =
      (kTagEvent << kTagShift) | (exit ? kExitBit : 0) | (continued ? kContinuedBit : 0) |
      ((delta & (kLowDeltaLimit - 1)) << kDeltaShift) | (function & kAddressMask);
  const std::uint64_t continuation =
      (kTagContinuation << kTagShift) | ((delta >> kLowDeltaBits) << kDeltaShift) | site;
  CallEntry e;
  e.units[0] = sync ? (kTagSync << kTagShift) | (now & kTimeMask) : event;
  e.units[1] = sync ? event : continuation;
  e.units[2] = continuation;
  e.bytes = (std::size_t{sync} + 1 + std::size_t{continued}) * kUnitBytes;
  e.has_sync = sync;
  e.sync_time = now;
  return e;
}

// Decodes a window into events; the first corrupt unit is corrupt_at its offset (events before it
// stay in `out`). Leading units up to the first EVENT or SYNC that cannot start an entry (the tail
// of an entry cut by the window) are skipped; `skipped` (when given) gets their byte count.
Expected<void> decode_calltrace(std::span<const std::uint8_t> bytes, std::vector<CallEvent>& out,
                                std::uint64_t* skipped = nullptr);

// The call stack after `events` (outermost first): enters push, an exit pops up to its function's
// frame (frames above it lost their exit, as after longjmp); exits of calls entered before the
// window are ignored.
std::vector<CallEvent> call_stack_after(std::span<const CallEvent> events);

std::unique_ptr<AuxDecoder> make_calltrace_decoder();

}  // namespace userperf::trace
