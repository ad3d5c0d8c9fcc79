// The consumer of BPF_MAP_TYPE_RINGBUF maps, libbpf's struct ring_buffer: several rings behind one
// epoll descriptor, each with its callback; records read in order, discarded ones skipped, the
// consumer position advanced after each. Not signal-safe, one thread at a time (as libbpf's).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "bpf/maps/ringbuf_map.hpp"

namespace userperf::bpf {

// libbpf's ring_buffer_sample_fn: a negative return stops consumption and is returned.
using RingbufSampleFn = int (*)(void* ctx, void* data, std::size_t size);

class RingbufConsumer {
 public:
  // An empty consumer with its epoll descriptor (nullptr with errno on failure).
  static std::unique_ptr<RingbufConsumer> create();
  ~RingbufConsumer();
  RingbufConsumer(const RingbufConsumer&) = delete;
  RingbufConsumer& operator=(const RingbufConsumer&) = delete;

  // ring_buffer__add. 0 or -errno.
  int add(std::shared_ptr<RingbufMap> ring, RingbufSampleFn fn, void* ctx);
  // ring_buffer__poll: waits up to timeout_ms (-1: forever) until a ring has data or a producer
  // woke it, then consumes what the woken rings hold. Returns the records consumed (at most
  // INT_MAX) or -errno (-EINTR, a callback's negative return).
  int poll(int timeout_ms);
  // ring_buffer__consume: every ring, without waiting.
  int consume();
  int epoll_fd() const { return epoll_fd_; }

 private:
  struct Ring {
    std::shared_ptr<RingbufMap> map;
    RingbufSampleFn fn;
    void* ctx;
  };
  RingbufConsumer() = default;
  static long consume_ring(Ring& ring);  // records consumed or a callback's negative return

  int epoll_fd_ = -1;
  std::vector<Ring> rings_;
};

}  // namespace userperf::bpf
