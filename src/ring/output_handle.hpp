// OutputHandle: the write path into a DataRing (the kernel's perf_output_handle). begin() reserves
// space, copy()/skip() fill it, end() leaves the ring and, for the last writer out, publishes
// data_head and delivers a pending wakeup.
//
// SIGNAL-SAFE: no locks, no allocation, no syscalls except the wakeup write(2) (and, once in a
// single-writer ring's life, make_shared's barrier). Safe to call from a signal handler that
// interrupted another write on the same thread, and from several threads into one ring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ring/data_ring.hpp"

namespace userperf::ring {

enum class OutputStatus {
  kOk,
  kLost,        // no room or paused: dropped and counted (the caller counts its lost_samples too)
  kNoDataArea,  // control-page-only ring: dropped without accounting, as the kernel does
  kTooManyWriters,
};

// perf_copy_f: copies len bytes of the source at offset `offset` into dst; returns the number of
// bytes NOT copied (0 on success).
using CopyFn = std::size_t (*)(void* dst, const void* src, std::size_t offset, std::size_t len);

class OutputHandle {
 public:
  // Reserves `size` bytes (a multiple of 8). When records were lost since the last LOST record,
  // reserves `lost_record_size` bytes more in front; lost() then says how many, and the caller
  // writes that LOST record first.
  OutputStatus begin(DataRing& ring, std::uint32_t size, std::uint32_t lost_record_size);

  std::uint64_t lost() const { return lost_; }
  std::uint64_t position() const { return start_ + cursor_; }

  // Inline for the common case of a piece that does not reach the ring's end.
  void copy(const void* src, std::size_t len) {
    const std::uint64_t offset = (start_ + cursor_) & mask_;
    if (offset + len <= mask_ + 1) {
      std::memcpy(data_ + offset, src, len);
      cursor_ += len;
      return;
    }
    copy_wrapped(src, len);
  }
  // Copies the len bytes at position `from` of another ring (`src`, a power of two of
  // `src_mask` + 1 bytes, len <= its size): one memcpy when neither ring wraps within them, three
  // at most (each ring wraps once at most). The cursor moves before the copy, so that nothing is
  // reloaded behind its stores.
  void copy_from_ring(const std::uint8_t* src, std::uint64_t src_mask, std::uint64_t from,
                      std::size_t len) {
    const std::uint64_t offset = (start_ + cursor_) & mask_;
    const std::uint64_t src_offset = from & src_mask;
    if (offset + len <= mask_ + 1 && src_offset + len <= src_mask + 1) {
      cursor_ += len;
      std::memcpy(data_ + offset, src + src_offset, len);
      return;
    }
    copy_from_ring_wrapped(src, src_mask, from, len);
  }
  // The next len bytes as one piece of ring memory, the cursor moved past them; nullptr (cursor
  // unmoved) when they would wrap. For a writer that stores its fields in place.
  std::uint8_t* contiguous(std::size_t len) {
    const std::uint64_t offset = (start_ + cursor_) & mask_;
    if (offset + len > mask_ + 1) return nullptr;
    cursor_ += len;
    return data_ + offset;
  }
  template <class T>
  void put(const T& value) {
    copy(&value, sizeof value);
  }
  // Advances the cursor without writing (the kernel's __output_skip: old bytes stay).
  void skip(std::size_t len);
  void zero(std::size_t len);
  // Copies len bytes through fn, in up to two contiguous pieces at the ring's end. Returns the
  // bytes fn did not copy; the cursor advances by len regardless so the record keeps its size.
  std::size_t copy_custom(CopyFn fn, const void* src, std::size_t len);

  // A PERF_RECORD_SAMPLE was written: counts towards attr.wakeup_events (0 = not in that mode).
  void count_sample(std::uint32_t wakeup_events);

  void end();

 private:
  template <class Chunk>
  void for_each_chunk(std::size_t len, Chunk&& chunk);
  void copy_wrapped(const void* src, std::size_t len);
  void copy_from_ring_wrapped(const std::uint8_t* src, std::uint64_t src_mask, std::uint64_t from,
                              std::size_t len);

  DataRing* ring_ = nullptr;
  std::uint8_t* data_ = nullptr;  // the ring's data area and mask, copied at begin()
  std::uint64_t mask_ = 0;
  std::uint64_t start_ = 0;   // ring position of the first reserved byte (lowest address)
  std::uint64_t cursor_ = 0;  // bytes written or skipped so far
  std::uint64_t size_ = 0;    // bytes reserved
  std::uint64_t lost_ = 0;
  bool local_ = false;  // the single-writer discipline (data_ring.hpp)
};

}  // namespace userperf::ring
