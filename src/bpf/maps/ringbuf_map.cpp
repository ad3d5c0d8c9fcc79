#include "bpf/maps/ringbuf_map.hpp"

#include <linux/bpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "support/descriptors.hpp"

namespace userperf::bpf {
namespace {

constexpr std::uint32_t kPosPages = 2;  // RINGBUF_POS_PAGES: consumer_pos, producer_pos

std::size_t page_bytes() {
  static const auto size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// The producer page: producer_pos first (the kernel's layout), then what commit() needs to find
// the map from a record (the kernel's struct bpf_ringbuf holds it before the consumer page).
struct ProducerPage {
  std::uint64_t producer_pos;
  RingbufMap* owner;
};

std::atomic_ref<std::uint32_t> header_len(RingbufHeader* hdr) {
  return std::atomic_ref<std::uint32_t>(hdr->len);
}

// A look at a header a publication revealed, only to decide whether to wake the consumer. By the
// time it is read the consumer may have taken the record and a writer may be filling that space
// with a payload (plain stores, as a program writes): the value is then meaningless but harmless
// (a spurious wakeup, or none for a consumer that has moved on and is not waiting there). The
// kernel reads it the same way. TSan would report the overlap with the payload's stores, so the
// look is not instrumented.
__attribute__((no_sanitize_thread)) bool header_committed_hint(const RingbufHeader* hdr) {
  return !(__atomic_load_n(&hdr->len, __ATOMIC_ACQUIRE) & BPF_RINGBUF_BUSY_BIT);
}

}  // namespace

Expected<std::unique_ptr<Map>> RingbufMap::create(const MapSpec& spec) {
  std::unique_ptr<RingbufMap> map(new RingbufMap(spec));
  if (const int err = map->map_memory(); err != 0) {
    return make_error(-err, "map '" + spec.name + "': cannot map the ring buffer's memory");
  }
  if (const int err = map->wakeup_.open(); err != 0) {
    return make_error(-err, "map '" + spec.name + "': cannot create the wakeup channel");
  }
  return std::unique_ptr<Map>(std::move(map));
}

// One memfd of 2 position pages + the data; a reserved range of 2 pages + twice the data, the
// memfd mapped over its start and its data pages mapped again right after.
int RingbufMap::map_memory() {
  const std::size_t page = page_bytes();
  const std::size_t size = spec_.max_entries;
  const std::size_t meta = kPosPages * page;
  const int fd = memfd_create("userperf-ringbuf", MFD_CLOEXEC);
  if (fd < 0) return -errno;
  if (ftruncate(fd, static_cast<off_t>(meta + size)) != 0) {
    const int err = -errno;
    close(fd);
    return err;
  }
  mapping_length_ = meta + 2 * size;
  void* range = mmap(nullptr, mapping_length_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (range == MAP_FAILED) {
    const int err = -errno;
    close(fd);
    return err;
  }
  base_ = static_cast<std::uint8_t*>(range);
  const bool first =
      mmap(base_, meta + size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
  const bool second =
      first && mmap(base_ + meta + size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                    static_cast<off_t>(meta)) != MAP_FAILED;
  const int err = second ? 0 : -errno;
  close(fd);  // the mappings keep the memory
  if (err != 0) return err;
  data_ = base_ + meta;
  mask_ = size - 1;
  reinterpret_cast<ProducerPage*>(base_ + page)->owner = this;
  return 0;
}

RingbufMap::~RingbufMap() {
  if (base_ != nullptr) munmap(base_, mapping_length_);
}

std::atomic_ref<std::uint64_t> RingbufMap::consumer_word() const {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(base_));
}

std::atomic_ref<std::uint64_t> RingbufMap::producer_word() const {
  return std::atomic_ref<std::uint64_t>(
      reinterpret_cast<ProducerPage*>(base_ + page_bytes())->producer_pos);
}

std::uint64_t RingbufMap::consumer_pos() const {
  return consumer_word().load(std::memory_order_acquire);
}

std::uint64_t RingbufMap::producer_pos() const {
  return producer_word().load(std::memory_order_acquire);
}

void RingbufMap::set_consumer_pos(std::uint64_t pos) {
  consumer_word().store(pos, std::memory_order_release);
}

void* RingbufMap::reserve(std::uint64_t size) {
  if (size > kRingbufMaxRecord) return nullptr;
  const std::uint64_t len = (size + kRingbufHeaderSize + 7) & ~std::uint64_t{7};
  if (len > data_size()) return nullptr;
  // Entering before the claim: whoever leaves last publishes every claim made meanwhile, and
  // only after each claimer wrote its busy header (a consumer never reads a stale header).
  writers_.fetch_add(1, std::memory_order_seq_cst);
  const std::uint64_t cons = consumer_word().load(std::memory_order_acquire);
  std::uint64_t pos = reserve_pos_.load(std::memory_order_seq_cst);
  do {
    // At most size - 1 bytes ahead of the consumer, as the kernel's check.
    if (pos + len - cons > mask_) {
      leave_reservation();
      return nullptr;
    }
  } while (!reserve_pos_.compare_exchange_weak(pos, pos + len, std::memory_order_seq_cst));
  auto* hdr = reinterpret_cast<RingbufHeader*>(data_ + (pos & mask_));
  hdr->pg_off =
      static_cast<std::uint32_t>((reinterpret_cast<std::uint8_t*>(hdr) - base_) / page_bytes());
  header_len(hdr).store(static_cast<std::uint32_t>(size) | BPF_RINGBUF_BUSY_BIT,
                        std::memory_order_release);
  leave_reservation();
  return reinterpret_cast<std::uint8_t*>(hdr) + kRingbufHeaderSize;
}

// The last writer out publishes the reservation position it saw; a writer that claimed after
// that look but left before this one's exit published nothing (this one was still inside), so
// the position is read again and the exit retried until no claim is left unpublished.
void RingbufMap::leave_reservation() {
  for (;;) {
    const std::uint64_t head = reserve_pos_.load(std::memory_order_seq_cst);
    if (writers_.fetch_sub(1, std::memory_order_seq_cst) != 1) return;
    auto published = producer_word();
    std::uint64_t current = published.load(std::memory_order_relaxed);
    const std::uint64_t before = current;
    while (static_cast<std::int64_t>(head - current) > 0 &&
           !published.compare_exchange_weak(current, head, std::memory_order_seq_cst,
                                            std::memory_order_relaxed)) {
    }
    // A record committed before it was published woke nobody who could see it: wake now when
    // the consumer waits at the first record this publication reveals and it is complete.
    if (current == before && static_cast<std::int64_t>(head - before) > 0 &&
        consumer_word().load(std::memory_order_acquire) == before) {
      auto* first = reinterpret_cast<RingbufHeader*>(data_ + (before & mask_));
      if (header_committed_hint(first)) wakeup_.wake();
    }
    if (reserve_pos_.load(std::memory_order_seq_cst) == head) return;
    writers_.fetch_add(1, std::memory_order_seq_cst);
  }
}

void RingbufMap::commit(void* sample, std::uint64_t flags, bool discard) {
  auto* hdr =
      reinterpret_cast<RingbufHeader*>(static_cast<std::uint8_t*>(sample) - kRingbufHeaderSize);
  const std::size_t page = page_bytes();
  auto* base =
      reinterpret_cast<std::uint8_t*>(reinterpret_cast<std::uintptr_t>(hdr) & ~(page - 1)) -
      std::size_t{hdr->pg_off} * page;
  RingbufMap* self = reinterpret_cast<ProducerPage*>(base + page)->owner;
  std::uint32_t len = header_len(hdr).load(std::memory_order_relaxed) ^ BPF_RINGBUF_BUSY_BIT;
  if (discard) len |= BPF_RINGBUF_DISCARD_BIT;
  header_len(hdr).exchange(len, std::memory_order_seq_cst);
  // Wake a consumer that caught up and waits for this very record (the kernel's rule).
  const std::uint64_t rec_pos =
      static_cast<std::uint64_t>(reinterpret_cast<std::uint8_t*>(hdr) - self->data_) & self->mask_;
  const std::uint64_t cons = self->consumer_pos() & self->mask_;
  if ((flags & BPF_RB_FORCE_WAKEUP) || (cons == rec_pos && !(flags & BPF_RB_NO_WAKEUP))) {
    self->wakeup_.wake();
  }
}

std::uint64_t RingbufMap::query(std::uint64_t flags) const {
  switch (flags) {
    case BPF_RB_AVAIL_DATA:
      return producer_pos() - consumer_pos();
    case BPF_RB_RING_SIZE:
      return data_size();
    case BPF_RB_CONS_POS:
      return consumer_pos();
    case BPF_RB_PROD_POS:
      return producer_pos();
    default:
      return 0;
  }
}

RingbufRecord RingbufMap::record_at(std::uint64_t pos) const {
  RingbufRecord rec;
  if (static_cast<std::int64_t>(producer_pos() - pos) <= 0) return rec;
  auto* hdr = reinterpret_cast<RingbufHeader*>(data_ + (pos & mask_));
  const std::uint32_t len = header_len(hdr).load(std::memory_order_acquire);
  if (len & BPF_RINGBUF_BUSY_BIT) {
    rec.state = RingbufRecord::State::kBusy;
    return rec;
  }
  rec.size = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
  rec.state = (len & BPF_RINGBUF_DISCARD_BIT) ? RingbufRecord::State::kDiscarded
                                              : RingbufRecord::State::kReady;
  rec.data = reinterpret_cast<std::uint8_t*>(hdr) + kRingbufHeaderSize;
  rec.next_pos = pos + ((rec.size + kRingbufHeaderSize + 7) & ~std::uint64_t{7});
  return rec;
}

MemoryRegion RingbufMap::value_region() const {
  const auto begin = reinterpret_cast<std::uintptr_t>(data_);
  return {begin, begin + 2 * data_size(), true};
}

// The kernel's ringbuf_map_*: no element operations (ENOTSUPP, 524).
void* RingbufMap::lookup(const void*) {
  return nullptr;
}
long RingbufMap::update(const void*, const void*, std::uint64_t) {
  return -kEnotsupp;
}
long RingbufMap::remove(const void*) {
  return -kEnotsupp;
}
int RingbufMap::lookup_elem(const void*, void*) {
  return -kEnotsupp;
}
int RingbufMap::update_elem(const void*, const void*, std::uint64_t) {
  return -kEnotsupp;
}
int RingbufMap::delete_elem(const void*) {
  return -kEnotsupp;
}
int RingbufMap::get_next_key(const void*, void*) {
  return -kEnotsupp;
}

}  // namespace userperf::bpf
