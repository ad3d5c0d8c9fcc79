// The consumer side of a perf ring (kernel-perf-spec §1.4, §1.5): iterates the records of a mapped
// ring, userperf's or the kernel's (same ABI). Nothing the producer wrote is trusted: a corrupt
// control page, head or record size yields an error status, never a read outside the mapping.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

namespace userperf::ring {

enum class ReadStatus {
  kOk,
  kEmpty,           // no further record in this pass
  kBadHead,         // head/tail unaligned, head behind tail, or more than data_size apart
  kBadSize,         // header.size < 8, not a multiple of 8, or past the published data
  kBadControlPage,  // data_offset/data_size do not describe a data area inside the mapping
  kOverrun,         // forward overwrite ring: unread data was overwritten (see overrun_bytes())
};
const char* to_string(ReadStatus status);

// A mapped ring: the control page and the data area (data_size bytes, 0 or a power of two).
// data_size is captured once here; the readers never re-read it from the producer's page.
struct RingView {
  perf_event_mmap_page* control = nullptr;
  const std::uint8_t* data = nullptr;
  std::uint64_t data_size = 0;
};

// Builds a view of the mapping [base, base + mapping_length) from its control page: kOk, or
// kBadControlPage when data_offset/data_size do not give an 8-aligned data area of 0 or 2^n >= 8
// bytes after the control page and inside the mapping.
ReadStatus make_ring_view(void* base, std::size_t mapping_length, RingView& out);

struct Record {
  perf_event_header header;  // the validated copy; bytes[0..8) may since have changed
  // The whole record, header included, contiguous. Points into the data area, or into the reader's
  // buffer when the record wraps; valid until the reader's next call, and in the data area only
  // until the producer reuses the space.
  std::span<const std::uint8_t> bytes;
  std::uint64_t position = 0;  // ring position of the record's first byte
};

namespace detail {

// What all readers share: the view, the buffer for records that wrap, the walk and the counters.
class ReaderBase {
 public:
  // Sum of the 'lost' fields of the PERF_RECORD_LOST records returned so far.
  std::uint64_t lost() const { return lost_; }
  // Records returned so far.
  std::uint64_t records() const { return records_; }
  // Ring position of the next record: after a drain that committed, the data_tail it stored.
  std::uint64_t position() const { return pos_; }

 protected:
  explicit ReaderBase(RingView view);

  // The next record in [pos_, end). When `overwritten`, the walk covers a ring the producer has
  // wrapped over, so a zero header (never written) or a record running past `end` (its end was
  // overwritten) ends the walk instead of being corruption. Errors stick until the next begin().
  ReadStatus next_until(std::uint64_t end, bool overwritten, Record& out);
  ReadStatus fail(ReadStatus status) { return status_ = status; }

  RingView view_;
  std::uint64_t head_ = 0;  // data_head as loaded by begin()
  std::uint64_t pos_ = 0;   // position of the next record
  ReadStatus status_ = ReadStatus::kOk;

 private:
  void copy_out(std::uint64_t pos, std::size_t n, std::uint8_t* dst) const;

  std::unique_ptr<std::uint8_t[]> scratch_;
  std::uint64_t lost_ = 0;
  std::uint64_t records_ = 0;
};

}  // namespace detail

// Forward consumer of a writable (non-overwrite) ring: reads [data_tail, data_head) and hands
// the space back by storing data_tail.
class Reader : public detail::ReaderBase {
 public:
  explicit Reader(RingView view);
  // Snapshots data_head (load-acquire) and data_tail and checks them: kOk or kBadHead.
  ReadStatus begin();
  // The next record of the snapshot, kEmpty at its end.
  ReadStatus next(Record& out);
  // Store-release data_tail = the position after the last record returned by next().
  void commit();
  // Gives up on the rest of the snapshot (e.g. after kBadSize): the position moves to the
  // snapshotted head, which the next commit() publishes.
  void discard();
};

// Forward overwrite ring (data mapped read-only): only data_head is a known record boundary, so
// records can be read only from a previous read position that has not been written over. The
// caller pauses output (PERF_EVENT_IOC_PAUSE_OUTPUT) around a pass. The control page is never
// written.
class ForwardOverwriteReader : public detail::ReaderBase {
 public:
  // previous_head: where the previous pass stopped, 0 for a ring read from its creation.
  explicit ForwardOverwriteReader(RingView view, std::uint64_t previous_head = 0);
  // Snapshots data_head: kOk, kBadHead, or kOverrun when more than data_size bytes were written
  // since previous_head (overrun_bytes() of them are gone; discard() resynchronizes at the head).
  ReadStatus begin();
  ReadStatus next(Record& out);
  // previous_head = the position after the last record returned by next().
  void commit();
  // Moves the position to the snapshotted head; commit() then makes it the previous head.
  void discard();
  std::uint64_t overrun_bytes() const { return overrun_bytes_; }
  std::uint64_t previous_head() const { return previous_head_; }

 private:
  std::uint64_t previous_head_;
  std::uint64_t overrun_bytes_ = 0;
};

// Overwrite ring written backward (attr.write_backward): data_head moves down from 0 and the newest
// record starts at it, so a pass walks up from data_head and returns records newest first. If the
// ring wrapped since previous_head, the walk stops at a zero header or before the oldest record,
// whose end was overwritten. The caller pauses output around a pass. The control page is never
// written (a writable backward ring's consumer stores data_tail = previous_head() itself).
class BackwardReader : public detail::ReaderBase {
 public:
  // previous_head: data_head of the previous pass, 0 (where writing starts) for the first one.
  explicit BackwardReader(RingView view, std::uint64_t previous_head = 0);
  ReadStatus begin();
  ReadStatus next(Record& out);
  // Marks the whole pass consumed: previous_head = the snapshotted head. Records come newest
  // first, so a partly read pass cannot be resumed; after kBadHead this resynchronizes at the head.
  void commit();
  std::uint64_t previous_head() const { return previous_head_; }

 private:
  std::uint64_t previous_head_;
  std::uint64_t end_ = 0;     // end of this pass's walk
  bool overwritten_ = false;  // the ring wrapped since previous_head
};

// One pass over a ring, the loop every consumer runs: begin(), then each record of the snapshot to
// `visit` (bool visit(const Record&); false stops the pass there). Returns kEmpty when the pass
// reached the end of the snapshot, kOk when `visit` stopped it, or the error that ended it.
// Nothing is committed: a peek is a pass without commit().
template <class AnyReader, class Visit>
ReadStatus read_pass(AnyReader& reader, Visit&& visit) {
  ReadStatus status = reader.begin();
  Record record;
  while (status == ReadStatus::kOk && (status = reader.next(record)) == ReadStatus::kOk) {
    if (!visit(static_cast<const Record&>(record))) return ReadStatus::kOk;
  }
  return status;
}

// read_pass, then commit() when the pass reached the end (kEmpty): the space goes back to the
// producer. A pass that `visit` stopped or an error ended commits nothing, so its records are read
// again by the next pass.
template <class AnyReader, class Visit>
ReadStatus drain(AnyReader& reader, Visit&& visit) {
  const ReadStatus status = read_pass(reader, std::forward<Visit>(visit));
  if (status == ReadStatus::kEmpty) reader.commit();
  return status;
}

}  // namespace userperf::ring
