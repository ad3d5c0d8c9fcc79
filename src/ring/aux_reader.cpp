#include "ring/aux_reader.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace userperf::ring {

namespace {

std::uint64_t load_head(const perf_event_mmap_page* control) {
  return std::atomic_ref<const __u64>(control->aux_head).load(std::memory_order_acquire);
}

bool valid(const AuxView& view) {
  return view.control != nullptr && view.data != nullptr && view.size != 0 &&
         (view.size & (view.size - 1)) == 0;
}

void copy_span(const AuxView& view, std::uint64_t end, std::uint64_t n, std::uint8_t* out) {
  std::uint64_t done = 0;
  for_each_aux_piece(end, n, view.size, [&](std::uint64_t offset, std::uint64_t piece) {
    std::memcpy(out + done, view.data + offset, piece);
    done += piece;
  });
}

}  // namespace

std::uint64_t copy_newest_aux(const AuxView& view, void* buf, std::size_t len,
                              std::uint64_t* head) {
  if (!valid(view)) return 0;
  const std::uint64_t h = load_head(view.control);
  const std::uint64_t n = std::min<std::uint64_t>({len, view.size, h});
  copy_span(view, h, n, static_cast<std::uint8_t*>(buf));
  if (head != nullptr) *head = h;
  return n;
}

std::uint64_t consume_aux(const AuxView& view, perf_event_mmap_page* writable_control, void* buf,
                          std::size_t len) {
  if (!valid(view) || writable_control == nullptr) return 0;
  const std::uint64_t h = load_head(view.control);
  std::atomic_ref<__u64> tail_word(writable_control->aux_tail);
  const std::uint64_t tail = tail_word.load(std::memory_order_relaxed);
  // A head behind the tail or more than the area ahead is corrupt: take nothing.
  const std::uint64_t pending = h - tail;
  if (pending > view.size) return 0;
  const std::uint64_t n = std::min<std::uint64_t>(pending, len);
  copy_span(view, tail + n, n, static_cast<std::uint8_t*>(buf));
  tail_word.store(tail + n, std::memory_order_release);
  return n;
}

}  // namespace userperf::ring
