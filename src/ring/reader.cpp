#include "ring/reader.hpp"

#include "abi/sample_layout.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>

namespace userperf::ring {
namespace {

constexpr std::uint64_t kHeaderSize = sizeof(perf_event_header);
constexpr std::uint64_t kRecordAlign = 8;

// Pairs with the producer's barrier before it publishes data_head: record bytes below the loaded
// head are complete.
std::uint64_t load_head(perf_event_mmap_page* control) {
  return std::atomic_ref<__u64>(control->data_head).load(std::memory_order_acquire);
}

// Control fields are read exactly once, so a producer changing them cannot make a value checked
// differ from the value used.
std::uint64_t load_once(__u64& field) {
  return std::atomic_ref<__u64>(field).load(std::memory_order_relaxed);
}

bool well_formed(std::uint64_t size) {
  return size >= kHeaderSize && size % kRecordAlign == 0;
}

// Heads only ever move one way; 2^63 bytes are never written, so a larger distance means the
// head went backwards.
bool moved_backwards(std::uint64_t distance) {
  return distance > (std::uint64_t{1} << 63);
}

bool aligned(std::uint64_t position) {
  return position % kRecordAlign == 0;
}

}  // namespace

const char* to_string(ReadStatus status) {
  switch (status) {
    case ReadStatus::kOk:
      return "ok";
    case ReadStatus::kEmpty:
      return "empty";
    case ReadStatus::kBadHead:
      return "bad data_head/data_tail";
    case ReadStatus::kBadSize:
      return "bad record size";
    case ReadStatus::kBadControlPage:
      return "bad control page";
    case ReadStatus::kOverrun:
      return "overrun: unread data overwritten";
  }
  return "unknown";
}

ReadStatus make_ring_view(void* base, std::size_t mapping_length, RingView& out) {
  if (base == nullptr ||
      reinterpret_cast<std::uintptr_t>(base) % alignof(perf_event_mmap_page) != 0 ||
      mapping_length < sizeof(perf_event_mmap_page)) {
    return ReadStatus::kBadControlPage;
  }
  auto* control = static_cast<perf_event_mmap_page*>(base);
  const std::uint64_t offset = load_once(control->data_offset);
  const std::uint64_t size = load_once(control->data_size);
  // With data_size a multiple of 8 an aligned header never straddles the end. The data area may not
  // overlap the control fields: data_tail would then be a record byte the reader overwrites.
  const bool size_ok = size == 0 || (size >= kHeaderSize && std::has_single_bit(size));
  const bool area_ok = offset >= sizeof(perf_event_mmap_page) && aligned(offset) &&
                       offset <= mapping_length && size <= mapping_length - offset;
  if (!size_ok || !area_ok) return ReadStatus::kBadControlPage;
  out = RingView{control, static_cast<const std::uint8_t*>(base) + offset, size};
  return ReadStatus::kOk;
}

namespace detail {

ReaderBase::ReaderBase(RingView view)
    : view_(view),
      // A record is never longer than the published data, so a wrapped copy needs at most this.
      scratch_(std::make_unique<std::uint8_t[]>(
          std::min<std::uint64_t>(view.data_size, abi::kMaxRecordSize))) {}

void ReaderBase::copy_out(std::uint64_t pos, std::size_t n, std::uint8_t* dst) const {
  // n <= data_size, so the bytes are at most two runs: up to the end of the area, then from 0.
  const std::uint64_t offset = pos & (view_.data_size - 1);
  const std::size_t first = std::min<std::uint64_t>(n, view_.data_size - offset);
  std::memcpy(dst, view_.data + offset, first);
  std::memcpy(dst + first, view_.data, n - first);
}

ReadStatus ReaderBase::next_until(std::uint64_t end, bool overwritten, Record& out) {
  if (status_ != ReadStatus::kOk) return status_;
  if (pos_ == end) return ReadStatus::kEmpty;
  perf_event_header header;
  copy_out(pos_, sizeof header, reinterpret_cast<std::uint8_t*>(&header));
  const std::uint64_t left = end - pos_;
  if (overwritten && (header.size == 0 || (well_formed(header.size) && header.size > left))) {
    return ReadStatus::kEmpty;
  }
  if (!well_formed(header.size) || header.size > left) return fail(ReadStatus::kBadSize);

  const std::uint64_t offset = pos_ & (view_.data_size - 1);
  const std::uint8_t* bytes = view_.data + offset;
  if (offset + header.size > view_.data_size) {
    copy_out(pos_, header.size, scratch_.get());
    bytes = scratch_.get();
  }
  if (header.type == PERF_RECORD_LOST && header.size >= 3 * sizeof(std::uint64_t)) {
    std::uint64_t lost;  // {header, u64 id, u64 lost}
    std::memcpy(&lost, bytes + 2 * sizeof(std::uint64_t), sizeof lost);
    lost_ += lost;
  }
  out = Record{header, {bytes, header.size}, pos_};
  pos_ += header.size;
  ++records_;
  return ReadStatus::kOk;
}

}  // namespace detail

Reader::Reader(RingView view) : ReaderBase(view) {}

ReadStatus Reader::begin() {
  status_ = ReadStatus::kOk;
  if (view_.data_size == 0) {
    head_ = pos_ = 0;
    return ReadStatus::kOk;
  }
  head_ = load_head(view_.control);
  pos_ = load_once(view_.control->data_tail);
  if (!aligned(head_) || !aligned(pos_) || head_ - pos_ > view_.data_size) {
    return fail(ReadStatus::kBadHead);
  }
  return ReadStatus::kOk;
}

ReadStatus Reader::next(Record& out) {
  return next_until(head_, false, out);
}

void Reader::commit() {
  if (view_.data_size == 0) return;
  // Release: every read of the records returned so far happens before the producer may reuse
  // their space (pairs with the producer's data_tail load, spec §1.3 barrier A).
  std::atomic_ref<__u64>(view_.control->data_tail).store(pos_, std::memory_order_release);
}

void Reader::discard() {
  pos_ = head_;
  status_ = ReadStatus::kOk;
}

ForwardOverwriteReader::ForwardOverwriteReader(RingView view, std::uint64_t previous_head)
    : ReaderBase(view), previous_head_(previous_head) {}

ReadStatus ForwardOverwriteReader::begin() {
  status_ = ReadStatus::kOk;
  overrun_bytes_ = 0;
  pos_ = previous_head_;
  if (view_.data_size == 0) {
    head_ = pos_;
    return ReadStatus::kOk;
  }
  head_ = load_head(view_.control);
  const std::uint64_t written = head_ - pos_;
  if (!aligned(head_) || !aligned(pos_) || moved_backwards(written)) {
    return fail(ReadStatus::kBadHead);
  }
  // The oldest surviving byte is now mid-record somewhere: no boundary to start from.
  if (written > view_.data_size) {
    overrun_bytes_ = written - view_.data_size;
    return fail(ReadStatus::kOverrun);
  }
  return ReadStatus::kOk;
}

ReadStatus ForwardOverwriteReader::next(Record& out) {
  return next_until(head_, false, out);
}

void ForwardOverwriteReader::commit() {
  previous_head_ = pos_;
}

void ForwardOverwriteReader::discard() {
  pos_ = head_;
  status_ = ReadStatus::kOk;
}

BackwardReader::BackwardReader(RingView view, std::uint64_t previous_head)
    : ReaderBase(view), previous_head_(previous_head) {}

ReadStatus BackwardReader::begin() {
  status_ = ReadStatus::kOk;
  if (view_.data_size == 0) {
    head_ = pos_ = end_ = previous_head_;
    return ReadStatus::kOk;
  }
  head_ = load_head(view_.control);
  pos_ = head_;
  const std::uint64_t written = previous_head_ - head_;
  if (!aligned(head_) || !aligned(previous_head_) || moved_backwards(written)) {
    return fail(ReadStatus::kBadHead);
  }
  overwritten_ = written > view_.data_size;
  end_ = head_ + std::min(written, view_.data_size);
  return ReadStatus::kOk;
}

ReadStatus BackwardReader::next(Record& out) {
  return next_until(end_, overwritten_, out);
}

void BackwardReader::commit() {
  previous_head_ = head_;
}

}  // namespace userperf::ring
