// SIGNAL-SAFE except create() and the destructor: see aux_ring.hpp.
#include "ring/aux_ring.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace userperf::ring {

namespace {

// How long a thread waits for another thread's store or copy before giving up: both are one
// bounded memcpy, so only a holder that is stopped or descheduled for long exhausts this.
constexpr unsigned kSpinBudget = 1u << 22;

std::uintptr_t self_id() {
  return static_cast<std::uintptr_t>(pthread_self());
}

}  // namespace

int AuxRing::create(std::size_t pages, bool overwrite, std::uint64_t watermark,
                    perf_event_mmap_page* control, std::unique_ptr<AuxRing>& out) {
  if (pages == 0 || (pages & (pages - 1)) != 0) return -EINVAL;
  std::unique_ptr<AuxRing> aux(new AuxRing());
  const std::size_t length = pages * page_size();
  const int fd = create_ring_memfd("userperf-aux", length);
  if (fd < 0) return fd;
  aux->fd_ = fd;
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return -ENOMEM;
  aux->data_ = static_cast<std::uint8_t*>(base);
  aux->size_ = length;
  aux->mask_ = length - 1;
  aux->overwrite_ = overwrite;
  aux->control_ = control;
  if (overwrite) {
    aux->watermark_ = 0;
  } else {
    // rb_alloc_aux: half the area by default, at most U32_MAX.
    aux->watermark_ = watermark != 0 ? watermark : std::min<std::uint64_t>(0xffffffffu, length / 2);
  }
  out = std::move(aux);
  return 0;
}

AuxRing::~AuxRing() {
  if (data_ != nullptr) munmap(data_, size_);
  if (fd_ >= 0) close(fd_);
}

void AuxRing::publish_head(std::uint64_t head) {
  std::atomic_ref<__u64>(control_->aux_head).store(head, std::memory_order_release);
}

std::uint64_t AuxRing::load_tail() const {
  return std::atomic_ref<__u64>(control_->aux_tail).load(std::memory_order_acquire);
}

std::uint64_t AuxRing::history() const {
  return std::min(write_position(), size_);
}

AuxRing::Lock AuxRing::lock_bytes() {
  const std::uintptr_t self = self_id();
  std::uintptr_t owner = byte_owner_.load(std::memory_order_relaxed);
  if (owner == self) return Lock::kNested;
  for (unsigned spins = 0; spins < kSpinBudget; ++spins) {
    owner = 0;
    if (byte_owner_.compare_exchange_weak(owner, self, std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
      return Lock::kTaken;
    }
    __builtin_ia32_pause();
  }
  return Lock::kBusy;
}

void AuxRing::unlock_bytes() {
  byte_owner_.store(0, std::memory_order_release);
}

void AuxRing::store(std::uint64_t pos, const void* src, std::size_t len) {
  const auto* bytes = static_cast<const std::uint8_t*>(src);
  while (len != 0) {
    const std::uint64_t offset = pos & mask_;
    const std::size_t piece = std::min<std::uint64_t>(len, size_ - offset);
    std::memcpy(data_ + offset, bytes, piece);
    bytes += piece;
    pos += piece;
    len -= piece;
  }
}

void AuxRing::copy_out(OutputHandle& h, std::uint64_t end, std::uint64_t len) const {
  std::uint64_t pos = end - len;
  while (len != 0) {
    const std::uint64_t offset = pos & mask_;
    const std::size_t piece = std::min<std::uint64_t>(len, size_ - offset);
    h.copy(data_ + offset, piece);
    pos += piece;
    len -= piece;
  }
}

}  // namespace userperf::ring
