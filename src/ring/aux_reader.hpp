// The consumer side of an AUX area (kernel-perf-spec §4.4): userperf's or the kernel's, mapped in
// this process or another. Nothing the producer wrote is trusted: positions are taken modulo the
// area's size as the consumer mapped it.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

namespace userperf::ring {

struct AuxView {
  const perf_event_mmap_page* control = nullptr;  // the data mapping's control page
  const std::uint8_t* data = nullptr;             // the AUX mapping
  std::uint64_t size = 0;                         // its length: a power of two
};

// Calls fn(offset_in_area, length) for the pieces, oldest first, of the n bytes that end at
// position `end` in an area of `size` bytes (n <= size).
template <class Piece>
void for_each_aux_piece(std::uint64_t end, std::uint64_t n, std::uint64_t size, Piece&& fn) {
  std::uint64_t pos = end - n;
  std::uint64_t done = 0;
  while (done < n) {
    const std::uint64_t offset = pos & (size - 1);
    const std::uint64_t piece = n - done < size - offset ? n - done : size - offset;
    fn(offset, piece);
    done += piece;
    pos += piece;
  }
}

// Overwrite mode (or a stopped/dead producer): copies the newest min(len, size, aux_head) bytes,
// the ones that end at aux_head, into buf, oldest first. Returns the count; *head gets aux_head.
std::uint64_t copy_newest_aux(const AuxView& view, void* buf, std::size_t len, std::uint64_t* head);

// Normal mode: the bytes between aux_tail and aux_head (at most size), copied into buf (up to len),
// then aux_tail advanced past them so the producer may reuse the space. Returns the count.
std::uint64_t consume_aux(const AuxView& view, perf_event_mmap_page* writable_control, void* buf,
                          std::size_t len);

}  // namespace userperf::ring
