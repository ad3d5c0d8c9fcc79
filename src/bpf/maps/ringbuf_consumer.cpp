#include "bpf/maps/ringbuf_consumer.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace userperf::bpf {

std::unique_ptr<RingbufConsumer> RingbufConsumer::create() {
  std::unique_ptr<RingbufConsumer> consumer(new RingbufConsumer());
  consumer->epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (consumer->epoll_fd_ < 0) return nullptr;
  return consumer;
}

RingbufConsumer::~RingbufConsumer() {
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

int RingbufConsumer::add(std::shared_ptr<RingbufMap> ring, RingbufSampleFn fn, void* ctx) {
  if (ring == nullptr || fn == nullptr) return -EINVAL;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = static_cast<std::uint32_t>(rings_.size());
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, ring->wakeup_fd(), &ev) != 0) return -errno;
  rings_.push_back({std::move(ring), fn, ctx});
  return 0;
}

// libbpf's ringbuf_process_ring: records up to the published producer position, stopping at the
// first still busy; positions re-read until a pass finds nothing new.
long RingbufConsumer::consume_ring(Ring& ring) {
  RingbufMap& map = *ring.map;
  long count = 0;
  std::uint64_t pos = map.consumer_pos();
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (RingbufRecord rec = map.record_at(pos);
         rec.state == RingbufRecord::State::kReady || rec.state == RingbufRecord::State::kDiscarded;
         rec = map.record_at(pos)) {
      progressed = true;
      pos = rec.next_pos;
      if (rec.state == RingbufRecord::State::kReady) {
        const int err = ring.fn(ring.ctx, const_cast<void*>(rec.data), rec.size);
        if (err < 0) {
          map.set_consumer_pos(pos);
          return err;
        }
        if (count < LONG_MAX) ++count;
      }
      map.set_consumer_pos(pos);
    }
  }
  return count;
}

int RingbufConsumer::consume() {
  long total = 0;
  for (Ring& ring : rings_) {
    ring.map->take_wakeup();
    const long n = consume_ring(ring);
    if (n < 0) return static_cast<int>(n);
    total += n;
  }
  return total > INT_MAX ? INT_MAX : static_cast<int>(total);
}

int RingbufConsumer::poll(int timeout_ms) {
  // As the kernel's ringbuf poll: a ring that holds unconsumed data is ready at once, whether or
  // not a producer woke it (records submitted with BPF_RB_NO_WAKEUP).
  for (const Ring& ring : rings_) {
    if (ring.map->producer_pos() != ring.map->consumer_pos()) {
      timeout_ms = 0;
      break;
    }
  }
  constexpr int kMaxEvents = 64;
  epoll_event events[kMaxEvents];
  const int ready = epoll_wait(epoll_fd_, events, kMaxEvents, timeout_ms);
  if (ready < 0) return -errno;
  std::vector<bool> woken(rings_.size(), false);
  for (int i = 0; i < ready; ++i) woken[events[i].data.u32] = true;
  long total = 0;
  for (std::size_t i = 0; i < rings_.size(); ++i) {
    Ring& ring = rings_[i];
    // Drained before reading: a record committed from here on wakes the next poll.
    if (woken[i]) ring.map->take_wakeup();
    if (!woken[i] && ring.map->producer_pos() == ring.map->consumer_pos()) continue;
    const long n = consume_ring(ring);
    if (n < 0) return static_cast<int>(n);
    total += n;
  }
  return total > INT_MAX ? INT_MAX : static_cast<int>(total);
}

}  // namespace userperf::bpf
