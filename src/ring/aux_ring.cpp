// SIGNAL-SAFE except create() and the destructor: see aux_ring.hpp.
#include "ring/aux_ring.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "support/process_barrier.hpp"

namespace userperf::ring {

namespace {

// How long a thread waits for another thread's store or copy before giving up: both are one
// bounded memcpy, so only a holder that is stopped or descheduled for long exhausts this.
constexpr unsigned kSpinBudget = 1u << 22;

}  // namespace

__attribute__((tls_model("initial-exec"))) constinit thread_local std::uint64_t t_aux_thread_word =
    0;

bool aux_bias_enabled() {
  return support::process_barrier_available();
}

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

std::uint64_t AuxRing::load_tail() const {
  return std::atomic_ref<__u64>(control_->aux_tail).load(std::memory_order_acquire);
}

AuxRing::Lock AuxRing::lock_bytes() {
  const std::uintptr_t self = aux_thread_token();
  std::uintptr_t owner = byte_owner_.load(std::memory_order_relaxed);
  if (owner == self) return Lock::kNested;
  for (unsigned spins = 0; spins < kSpinBudget; ++spins) {
    owner = 0;
    if (byte_owner_.compare_exchange_weak(owner, self, std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
      if (revoke_writer(self)) return Lock::kTaken;
      unlock_bytes();
      return Lock::kBusy;
    }
    __builtin_ia32_pause();
  }
  return Lock::kBusy;
}

bool AuxRing::revoke_writer(std::uintptr_t self) {
  AuxWriter* w = writer_.load(std::memory_order_relaxed);
  if (w == nullptr) return true;
  const std::uintptr_t owner = w->owner.load(std::memory_order_relaxed);
  if (owner != 0) {
    w->owner.store(0, std::memory_order_relaxed);
    if (owner == self) {
      // This thread's own bias: a signal handler that interrupts it from here on sees no owner
      // and finds this thread holding the lock (kNested).
      std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
      w->contended.store(true, std::memory_order_relaxed);
      // After it, the owner either sees owner == 0 when it enters (and takes this lock) or its
      // `busy` store is visible below.
      support::process_barrier();
    }
  }
  // The owner (or a revoked owner that stayed inside: an earlier revoker timed out) leaves its
  // store. Its last plain stores happen before this thread's (release/acquire on `busy`).
  for (unsigned spins = 0; spins < kSpinBudget; ++spins) {
    const std::uintptr_t busy = w->busy.load(std::memory_order_acquire);
    if (busy == 0 || AuxWriter::holder(busy) == self) {
      writer_.store(nullptr, std::memory_order_relaxed);
      return true;
    }
    __builtin_ia32_pause();
  }
  return false;  // still registered: the next lock holder waits for it again
}

void AuxRing::unlock_bytes() {
  byte_owner_.store(0, std::memory_order_release);
}

void AuxRing::store_wrapping(std::uint64_t pos, const void* src, std::size_t len) {
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

}  // namespace userperf::ring
