// BPF_MAP_TYPE_RINGBUF (kernel/bpf/ringbuf.c): one ring shared by every writer, records of any size
// reserved, filled in place and then submitted or discarded, read in order by a consumer.
//
// Memory, as the kernel's: a consumer_pos page, a producer_pos page, then the max_entries data
// bytes mapped twice back to back (one memfd, two MAP_FIXED views), so a record that wraps past
// the end is contiguous for the program and the consumer. Each record starts with an 8-byte
// header {u32 len, u32 pg_off}: len carries BPF_RINGBUF_BUSY_BIT until the record is submitted
// and BPF_RINGBUF_DISCARD_BIT when it was discarded; pg_off is the header's distance in pages from
// the start of the ring (the consumer_pos page), from which commit() finds the ring. Records are
// 8-byte aligned; positions are free-running.
//
// Writers are programs in signal handlers on any thread, nested on one thread when a signal
// interrupts a reservation. The kernel takes a spin lock (trylock in NMI context, failing the
// reservation when it is held). A lock here could be held by the code a signal interrupted, so
// reservation is lock-free instead: the space is claimed by compare-and-swap on a private
// reservation position; producer_pos, what the consumer reads, moves only past records whose
// headers are written, published by the last writer out of the reservation window (the perf
// ring's shared discipline, ring/output_handle.cpp). A nested reservation therefore succeeds
// where the kernel's NMI-context trylock would fail; its record becomes visible when the
// interrupted reservation ends, a few instructions later.
#pragma once

#include <atomic>
#include <cstdint>

#include "bpf/maps/map.hpp"
#include "support/wakeup_pipe.hpp"

namespace userperf::bpf {

inline constexpr std::uint32_t kRingbufHeaderSize = 8;              // BPF_RINGBUF_HDR_SZ
inline constexpr std::uint32_t kRingbufMaxRecord = UINT32_MAX / 4;  // RINGBUF_MAX_RECORD_SZ

struct RingbufHeader {
  std::uint32_t len;     // size | BPF_RINGBUF_BUSY_BIT / BPF_RINGBUF_DISCARD_BIT
  std::uint32_t pg_off;  // pages from the ring's start to this header
};

// What the consumer finds at its position.
struct RingbufRecord {
  enum class State : std::uint8_t { kEmpty, kBusy, kDiscarded, kReady };
  State state = State::kEmpty;
  const void* data = nullptr;  // kReady/kDiscarded: the payload (contiguous even when it wraps)
  std::uint32_t size = 0;      // the payload's size
  std::uint64_t next_pos = 0;  // the consumer position after this record
};

class RingbufMap final : public Map {
 public:
  // `spec` has passed check_map_create().
  static Expected<std::unique_ptr<Map>> create(const MapSpec& spec);
  ~RingbufMap() override;

  // ---- program side: SIGNAL-SAFE, lock-free, no allocation.
  // bpf_ringbuf_reserve: the payload of a new busy record, or nullptr (too large, no room).
  void* reserve(std::uint64_t size);
  // bpf_ringbuf_submit / discard: `sample` is what reserve returned. `flags`: BPF_RB_NO_WAKEUP,
  // BPF_RB_FORCE_WAKEUP; otherwise consumers are woken when they wait for this very record.
  static void commit(void* sample, std::uint64_t flags, bool discard);
  // bpf_ringbuf_query's BPF_RB_* values (0 for an unknown flag).
  std::uint64_t query(std::uint64_t flags) const;

  // The map operations of the bpf() syscall are the kernel's -ENOTSUPP; lookup has no value.
  void* lookup(const void* key) override;
  long update(const void* key, const void* value, std::uint64_t flags) override;
  long remove(const void* key) override;
  int lookup_elem(const void* key, void* value) override;
  int update_elem(const void* key, const void* value, std::uint64_t flags) override;
  int delete_elem(const void* key) override;
  int get_next_key(const void* key, void* next_key) override;
  // The data area, both views: where reserved records live.
  MemoryRegion value_region() const override;

  // ---- consumer side (one consumer at a time, as libbpf's ring_buffer).
  std::uint64_t data_size() const { return mask_ + 1; }
  std::uint64_t consumer_pos() const;
  std::uint64_t producer_pos() const;
  // The record at consumer position `pos` (kEmpty when pos has reached producer_pos).
  RingbufRecord record_at(std::uint64_t pos) const;
  void set_consumer_pos(std::uint64_t pos);  // a release store: the space may be reused
  // Readable when a producer woke consumers (support::WakeupPipe).
  int wakeup_fd() const { return wakeup_.read_fd(); }
  bool take_wakeup() { return wakeup_.drain(); }

 private:
  explicit RingbufMap(const MapSpec& spec) : Map(spec) {}
  int map_memory();
  void leave_reservation();
  std::atomic_ref<std::uint64_t> consumer_word() const;
  std::atomic_ref<std::uint64_t> producer_word() const;

  std::uint8_t* base_ = nullptr;  // the consumer_pos page; data at base_ + 2 pages
  std::uint8_t* data_ = nullptr;
  std::size_t mapping_length_ = 0;
  std::uint64_t mask_ = 0;
  std::atomic<std::uint64_t> reserve_pos_{0};  // claimed space (free-running)
  std::atomic<std::uint32_t> writers_{0};      // reservations between claim and header write
  support::WakeupPipe wakeup_;
};

}  // namespace userperf::bpf
