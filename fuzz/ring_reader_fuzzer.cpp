// A hostile producer against the ring readers (kernel-perf-spec §1.4, §1.5). The input is a script
// of producer actions on a real mapped ring (control page + data pages, PROT_NONE pages on both
// sides: an overread faults) interleaved with consumer calls on one of the three readers. What
// the readers promise, checked after every call:
// - make_ring_view accepts exactly the control pages whose data area is 0 or 2^n >= 8 bytes, 8
//   aligned, after the control page and inside the mapping;
// - begin() is kOk, kBadHead, or (forward overwrite only) kOverrun; next() is kOk, kEmpty,
//   kBadSize or the sticky error of begin();
// - a returned record is the validated header's size (>= 8, a multiple of 8), its bytes are in the
//   data area or (when it wraps) a copy equal to the ring's bytes at its position, its position
//   is where the previous one ended (the first at the pass's start), and it lies inside the
//   pass's window ([tail, head) forward, [head, min(previous_head, head + data_size)) backward);
// - records() counts the records returned, lost() only grows, by the 'lost' of LOST records;
// - Reader::commit() publishes exactly the position after the last record; the overwrite readers
//   never write the control page.
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <variant>

#include "byte_script.hpp"
#include "ring/reader.hpp"

using namespace userperf;
using ring::ReadStatus;

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kMaxDataPages = 8;
constexpr std::uint64_t kHeaderSize = sizeof(perf_event_header);

[[noreturn]] void broken(const char* what, std::uint64_t a = 0, std::uint64_t b = 0) {
  std::fprintf(stderr, "ring_reader invariant broken: %s (%#llx, %#llx)\n", what,
               static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
  std::abort();
}

// guard page | control page | kMaxDataPages data pages | guard page; per input only the first
// `length` bytes after the front guard are accessible, the rest is PROT_NONE too.
struct Mapping {
  std::uint8_t* region = nullptr;
  std::uint8_t* base = nullptr;
  std::size_t length = 0;

  Mapping() {
    const std::size_t total = (kMaxDataPages + 3) * kPage;
    void* p = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) broken("mmap");
    region = static_cast<std::uint8_t*>(p);
    base = region + kPage;
  }
  void open(std::size_t bytes) {
    length = bytes;
    if (mprotect(base, length, PROT_READ | PROT_WRITE) != 0) broken("mprotect");
    std::memset(base, 0, length);
  }
  void close() {
    if (mprotect(base, length, PROT_NONE) != 0) broken("mprotect");
  }
  perf_event_mmap_page* control() const { return reinterpret_cast<perf_event_mmap_page*>(base); }
};

bool expected_view_ok(std::uint64_t offset, std::uint64_t size, std::size_t length) {
  const bool size_ok = size == 0 || (size >= 8 && std::has_single_bit(size));
  const bool area_ok = offset >= sizeof(perf_event_mmap_page) && offset % 8 == 0 &&
                       offset <= length && size <= length - offset;
  return size_ok && area_ok;
}

enum class Kind { kForward, kForwardOverwrite, kBackward };

// One reader under test with what the fuzzer knows it must do.
struct Consumer {
  Kind kind;
  ring::RingView view;
  std::variant<ring::Reader, ring::ForwardOverwriteReader, ring::BackwardReader> reader;
  Mapping* mapping;
  bool begun = false;
  ReadStatus sticky = ReadStatus::kOk;  // the error begin() or next() ended the pass with
  std::uint64_t window_begin = 0, window_end = 0;
  std::uint64_t expected_position = 0;  // where the next record must start
  std::uint64_t expected_lost = 0;
  std::uint64_t expected_records = 0;
  std::uint64_t committed_floor = 0;  // forward overwrite: no record below the committed head
  bool wrapped_backward = false;      // a backward ring wrapped since previous_head: may end early

  static std::variant<ring::Reader, ring::ForwardOverwriteReader, ring::BackwardReader> make(
      Kind kind, ring::RingView view, std::uint64_t previous_head) {
    switch (kind) {
      case Kind::kForward:
        return ring::Reader(view);
      case Kind::kForwardOverwrite:
        return ring::ForwardOverwriteReader(view, previous_head);
      case Kind::kBackward:
        break;
    }
    return ring::BackwardReader(view, previous_head);
  }
  Consumer(Kind k, ring::RingView v, std::uint64_t previous_head, Mapping* m)
      : kind(k),
        view(v),
        reader(make(k, v, previous_head)),
        mapping(m),
        committed_floor(previous_head) {}

  const ring::detail::ReaderBase& base() const {
    return std::visit([](const auto& r) -> const ring::detail::ReaderBase& { return r; }, reader);
  }
  std::uint64_t previous_head() const {
    if (auto* r = std::get_if<ring::ForwardOverwriteReader>(&reader)) return r->previous_head();
    if (auto* r = std::get_if<ring::BackwardReader>(&reader)) return r->previous_head();
    return 0;
  }

  void begin() {
    perf_event_mmap_page* control = view.control;
    const std::uint64_t head = control->data_head, tail = control->data_tail;
    const std::uint64_t previous = previous_head();
    const ReadStatus status = std::visit([](auto& r) { return r.begin(); }, reader);
    mirror_begin(head, tail, previous, status);
  }

  // What begin() must have returned for these control values, and the pass's window.
  void mirror_begin(std::uint64_t head, std::uint64_t tail, std::uint64_t previous,
                    ReadStatus status) {
    begun = true;
    sticky = status;
    wrapped_backward = false;
    if (status != ReadStatus::kOk && status != ReadStatus::kBadHead &&
        !(status == ReadStatus::kOverrun && kind == Kind::kForwardOverwrite)) {
      broken("begin() status", static_cast<std::uint64_t>(status));
    }
    if (view.data_size == 0) {
      if (status != ReadStatus::kOk) broken("begin() on an empty ring");
      window_begin = window_end = expected_position = (kind == Kind::kForward ? 0 : previous);
      return;
    }
    switch (kind) {
      case Kind::kForward: {
        const bool ok = head % 8 == 0 && tail % 8 == 0 && head - tail <= view.data_size;
        if (ok != (status == ReadStatus::kOk)) broken("forward begin() verdict", head, tail);
        window_begin = expected_position = tail;
        window_end = head;
        break;
      }
      case Kind::kForwardOverwrite: {
        const std::uint64_t written = head - previous;
        const bool aligned = head % 8 == 0 && previous % 8 == 0 && written <= (1ull << 63);
        const ReadStatus want = !aligned                   ? ReadStatus::kBadHead
                                : written > view.data_size ? ReadStatus::kOverrun
                                                           : ReadStatus::kOk;
        if (want != status) broken("overwrite begin() verdict", head, previous);
        window_begin = expected_position = previous;
        window_end = head;
        break;
      }
      case Kind::kBackward: {
        const std::uint64_t written = previous - head;
        const bool aligned = head % 8 == 0 && previous % 8 == 0 && written <= (1ull << 63);
        if (aligned != (status == ReadStatus::kOk)) broken("backward begin() verdict", head);
        window_begin = expected_position = head;
        window_end = head + (written < view.data_size ? written : view.data_size);
        wrapped_backward = written > view.data_size;
        break;
      }
    }
  }

  // The ring's byte at stream position p, as the producer wrote it.
  std::uint8_t ring_byte(std::uint64_t p) const { return view.data[p & (view.data_size - 1)]; }

  void check_record(const ring::Record& record) {
    const std::uint16_t size = record.header.size;
    if (size < kHeaderSize || size % 8 != 0) broken("record size", size);
    if (record.bytes.size() != size) broken("bytes vs header size", record.bytes.size(), size);
    if (record.position != expected_position) {
      broken("record position", record.position, expected_position);
    }
    if (record.position - window_begin > window_end - window_begin ||
        size > window_end - record.position) {
      broken("record outside the pass's window", record.position, size);
    }
    if (kind == Kind::kForwardOverwrite && record.position - committed_floor > (1ull << 63)) {
      broken("record below the committed head", record.position, committed_floor);
    }
    const std::uint8_t* p = record.bytes.data();
    const std::uint8_t* area_end = view.data + view.data_size;
    const bool in_area = p >= view.data && p + size <= area_end;
    const std::uint8_t* map_end = mapping->base + mapping->length;
    const bool overlaps_mapping = p < map_end && p + size > mapping->base;
    if (!in_area && overlaps_mapping) broken("record bytes straddle the data area");
    if (in_area &&
        static_cast<std::uint64_t>(p - view.data) != (record.position & (view.data_size - 1))) {
      broken("record bytes not at its position");
    }
    // Read every byte (ASan/guard pages catch a bad span) and compare with the ring.
    for (std::size_t i = 0; i < size; ++i) {
      if (p[i] != ring_byte(record.position + i)) broken("record copy differs from the ring", i);
    }
    if (std::memcmp(&record.header, p, sizeof record.header) != 0) broken("header copy");
    expected_position += size;
    ++expected_records;
    if (record.header.type == PERF_RECORD_LOST && size >= 24) {
      std::uint64_t lost;
      std::memcpy(&lost, p + 16, sizeof lost);
      expected_lost += lost;
    }
  }

  void check_counters() const {
    if (base().records() != expected_records) broken("records()", base().records());
    if (base().lost() != expected_lost) broken("lost()", base().lost(), expected_lost);
  }

  void next() {
    if (!begun) return;  // next() before begin() is not part of the contract
    ring::Record record;
    const ReadStatus status = std::visit([&](auto& r) { return r.next(record); }, reader);
    if (sticky != ReadStatus::kOk) {
      if (status != sticky) broken("error not sticky", static_cast<std::uint64_t>(status));
      return;
    }
    switch (status) {
      case ReadStatus::kOk:
        check_record(record);
        break;
      case ReadStatus::kEmpty:
        if (expected_position != window_end && !wrapped_backward) {
          broken("kEmpty before the head", expected_position, window_end);
        }
        break;
      case ReadStatus::kBadSize:
        sticky = status;
        break;
      default:
        broken("next() status", static_cast<std::uint64_t>(status));
    }
    check_counters();
  }

  void commit() {
    if (!begun) return;
    std::visit([](auto& r) { r.commit(); }, reader);
    switch (kind) {
      case Kind::kForward:
        if (view.data_size != 0 && view.control->data_tail != expected_position) {
          broken("commit() tail", view.control->data_tail, expected_position);
        }
        break;
      case Kind::kForwardOverwrite:
        if (previous_head() != expected_position) broken("commit() previous head");
        committed_floor = expected_position;
        break;
      case Kind::kBackward:
        if (view.data_size != 0 && sticky == ReadStatus::kOk && previous_head() != window_begin) {
          broken("backward commit() previous head", previous_head(), window_begin);
        }
        break;
    }
    begun = false;
  }

  void discard() {
    if (!begun || kind == Kind::kBackward) return;
    if (auto* r = std::get_if<ring::Reader>(&reader)) r->discard();
    if (auto* r = std::get_if<ring::ForwardOverwriteReader>(&reader)) r->discard();
    // The position moves to the snapshotted head and errors clear.
    expected_position = window_end;
    window_begin = window_end;
    sticky = ReadStatus::kOk;
  }

  // read_pass / drain: every visited record goes through the same checks; visit says stop after
  // `stop_after` records.
  void pass(bool drain, unsigned stop_after) {
    perf_event_mmap_page* control = view.control;
    const std::uint64_t head = control->data_head, tail = control->data_tail;
    const std::uint64_t previous = previous_head();
    unsigned seen = 0;
    auto visit = [&](const ring::Record& record) {
      if (seen == 0) mirror_begin(head, tail, previous, ReadStatus::kOk);
      check_record(record);
      check_counters();
      return ++seen <= stop_after;
    };
    const ReadStatus status =
        drain ? std::visit([&](auto& r) { return ring::drain(r, visit); }, reader)
              : std::visit([&](auto& r) { return ring::read_pass(r, visit); }, reader);
    if (seen == 0) {
      const bool begin_failed = status == ReadStatus::kBadHead || status == ReadStatus::kOverrun;
      mirror_begin(head, tail, previous, begin_failed ? status : ReadStatus::kOk);
    }
    if (status == ReadStatus::kOk) {
      if (seen != stop_after + 1) broken("visit's stop ignored", seen, stop_after);
    } else if (status != ReadStatus::kEmpty && status != ReadStatus::kBadSize && seen != 0) {
      broken("pass status after records", static_cast<std::uint64_t>(status));
    } else if (status == ReadStatus::kEmpty && expected_position != window_end &&
               !wrapped_backward) {
      broken("pass ended before the head", expected_position, window_end);
    }
    check_counters();
    begun = false;
    if (drain && status == ReadStatus::kEmpty) {
      if (kind == Kind::kForward && view.data_size != 0 &&
          control->data_tail != expected_position) {
        broken("drain's commit", control->data_tail, expected_position);
      }
      if (kind == Kind::kForwardOverwrite) committed_floor = expected_position;
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Mapping mapping;
  fuzz::ByteScript in(data, size);
  // Control page + 1..8 data pages; the default control page describes all of them.
  const std::size_t data_pages = std::size_t{1} << in.range<int>(0, 3);
  mapping.open((1 + data_pages) * kPage);
  perf_event_mmap_page* control = mapping.control();
  control->data_offset = kPage;
  control->data_size = data_pages * kPage;
  std::uint8_t* const data_area = mapping.base + kPage;
  const std::size_t data_length = data_pages * kPage;

  std::optional<Consumer> consumer;
  std::uint64_t producer_head = 0;  // where the well-behaved producer writes next
  int steps = 0;
  while (in.remaining() > 0 && ++steps < 512) {
    const std::uint64_t wrap = control->data_size != 0 && std::has_single_bit(control->data_size) &&
                                       control->data_size <= data_length
                                   ? control->data_size
                                   : data_length;
    const int op = in.range<int>(0, 15);
    perf_event_mmap_page before;
    std::memcpy(&before, control, sizeof before);
    switch (op) {
      case 0: {  // raw bytes anywhere in the data pages
        const std::size_t at = in.range<std::size_t>(0, data_length - 1);
        const std::size_t n = in.range<std::size_t>(0, 64);
        for (std::size_t i = 0; i < n && in.remaining() > 0; ++i) {
          data_area[(at + i) % data_length] = in.take<std::uint8_t>();
        }
        break;
      }
      case 1:
      case 2:
      case 3: {  // a record at the producer's head (forward or backward), wrapping
        const bool backward = in.flag();
        perf_event_header header;
        header.type = in.range<std::uint32_t>(0, 20);
        header.misc = in.take<std::uint16_t>();
        const std::uint64_t units = in.range<std::uint64_t>(1, 64);
        header.size = static_cast<std::uint16_t>(units * 8);
        if (in.range<int>(0, 7) == 0) header.size = in.take<std::uint16_t>();
        const std::uint64_t at = backward ? producer_head - header.size : producer_head;
        std::uint8_t body[8];
        std::memcpy(body, &header, sizeof header);
        const std::uint64_t fill = in.take<std::uint64_t>();
        for (std::uint64_t i = 0; i < header.size; ++i) {
          const std::uint8_t byte =
              i < 8 ? body[i] : static_cast<std::uint8_t>(fill >> (8 * (i % 8)));
          data_area[(at + i) & (wrap - 1)] = byte;
        }
        producer_head = backward ? at : at + header.size;
        if (in.flag()) control->data_head = producer_head;
        break;
      }
      case 4:  // data_head: published, arbitrary, or nearby
        switch (in.range<int>(0, 2)) {
          case 0:
            control->data_head = producer_head;
            break;
          case 1:
            control->data_head = in.take<std::uint64_t>();
            break;
          default:
            control->data_head += in.range<std::int64_t>(-4096, 4096);
        }
        break;
      case 5:  // data_tail
        control->data_tail = in.flag() ? in.take<std::uint64_t>()
                                       : control->data_tail + in.range<std::int64_t>(-64, 64);
        break;
      case 6: {  // the producer jumps (wraps many times) without writing
        const std::uint64_t wraps = in.range<std::uint64_t>(0, 4);
        producer_head += wraps * wrap + 8 * in.range<std::uint64_t>(0, 64);
        break;
      }
      case 7: {  // data_offset / data_size, seen by the next make_ring_view
        if (in.flag()) {
          control->data_offset =
              in.flag() ? in.take<std::uint64_t>() : in.range<std::uint64_t>(0, 9) * 512;
        } else {
          control->data_size =
              in.flag() ? in.take<std::uint64_t>() : std::uint64_t{1} << in.range<int>(0, 16);
        }
        break;
      }
      case 8: {  // a new view and reader
        ring::RingView view;
        const std::uint64_t offset = control->data_offset, view_size = control->data_size;
        const ReadStatus status = ring::make_ring_view(mapping.base, mapping.length, view);
        const bool ok = expected_view_ok(offset, view_size, mapping.length);
        if ((status == ReadStatus::kOk) != ok) broken("make_ring_view verdict", offset, view_size);
        if (status != ReadStatus::kOk && status != ReadStatus::kBadControlPage)
          broken("view status");
        if (!ok) break;
        if (view.data != mapping.base + offset || view.data_size != view_size) broken("view area");
        const auto kind = static_cast<Kind>(in.range<int>(0, 2));
        const std::uint64_t previous =
            in.flag() ? 0 : (in.flag() ? producer_head : in.take<std::uint64_t>());
        consumer.emplace(kind, view, previous, &mapping);
        break;
      }
      case 9:
      case 10:
        if (!consumer) break;
        consumer->begin();
        break;
      case 11:
      case 12: {
        if (!consumer) break;
        const int n = in.range<int>(1, 16);
        for (int i = 0; i < n; ++i) consumer->next();
        break;
      }
      case 13:
        if (consumer) consumer->commit();
        break;
      case 14:
        if (consumer) consumer->discard();
        break;
      case 15:
        if (consumer) consumer->pass(in.flag(), in.range<unsigned>(0, 64));
        break;
    }
    // A consumer writes nothing but a forward reader's data_tail into the control page.
    if (op >= 9 && consumer) {
      if (consumer->kind == Kind::kForward) before.data_tail = control->data_tail;
      if (std::memcmp(&before, control, sizeof before) != 0)
        broken("consumer wrote the control page");
    }
  }
  consumer.reset();
  mapping.close();
  return 0;
}
