// The C API's eBPF calls: each forwards to the process-wide BPF registry and turns a negative
// errno into -1 + errno.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "api/engine_instance.hpp"
#include "bpf/maps/ringbuf_consumer.hpp"
#include "bpf/perf/bpf_registry.hpp"
#include "bpf/runtime/base_helpers.hpp"
#include "support/expected.hpp"
#include "userperf/userperf.h"

namespace {

using userperf::syscall_return;
using userperf::api::bpf_registry;

// libbpf's convention (libbpf_err): a negative errno is returned and also left in errno.
int libbpf_return(int rc) {
  if (rc < 0) errno = -rc;
  return rc;
}

}  // namespace

extern "C" {

int userperf_bpf_prog_load_from(int prog_fd, const char* prog_name, char* log_buf,
                                size_t log_size) {
  std::string log;
  const int rc =
      prog_name == nullptr ? -EINVAL : bpf_registry().load_program_from(prog_fd, prog_name, &log);
  if (log_buf != nullptr && log_size > 0) {
    const std::size_t n = std::min(log.size(), log_size - 1);
    std::memcpy(log_buf, log.data(), n);
    log_buf[n] = '\0';
  }
  return syscall_return(rc);
}

int userperf_bpf_map_fd(int prog_fd, const char* name) {
  if (name == nullptr) return syscall_return(-EINVAL);
  return syscall_return(bpf_registry().map_fd(prog_fd, name));
}

int userperf_bpf_map_lookup_elem(int map_fd, const void* key, void* value) {
  return syscall_return(bpf_registry().map_lookup_elem(map_fd, key, value));
}

int userperf_bpf_map_update_elem(int map_fd, const void* key, const void* value, uint64_t flags) {
  return syscall_return(bpf_registry().map_update_elem(map_fd, key, value, flags));
}

int userperf_bpf_map_delete_elem(int map_fd, const void* key) {
  return syscall_return(bpf_registry().map_delete_elem(map_fd, key));
}

int userperf_bpf_map_get_next_key(int map_fd, const void* key, void* next_key) {
  return syscall_return(bpf_registry().map_get_next_key(map_fd, key, next_key));
}

struct userperf_ring_buffer {
  std::unique_ptr<userperf::bpf::RingbufConsumer> consumer;
};

int userperf_ring_buffer_add(struct userperf_ring_buffer* rb, int map_fd,
                             userperf_ring_buffer_sample_fn sample_cb, void* ctx) {
  if (rb == nullptr || sample_cb == nullptr) return libbpf_return(-EINVAL);
  std::shared_ptr<userperf::bpf::RingbufMap> map;
  if (const int err = bpf_registry().ringbuf(map_fd, map); err != 0) return libbpf_return(err);
  return libbpf_return(rb->consumer->add(std::move(map), sample_cb, ctx));
}

struct userperf_ring_buffer* userperf_ring_buffer_new(int map_fd,
                                                      userperf_ring_buffer_sample_fn sample_cb,
                                                      void* ctx) {
  auto rb = std::make_unique<userperf_ring_buffer>();
  rb->consumer = userperf::bpf::RingbufConsumer::create();
  if (rb->consumer == nullptr) return nullptr;  // errno from epoll_create1
  if (userperf_ring_buffer_add(rb.get(), map_fd, sample_cb, ctx) != 0) return nullptr;
  return rb.release();
}

int userperf_ring_buffer_poll(struct userperf_ring_buffer* rb, int timeout_ms) {
  if (rb == nullptr) return libbpf_return(-EINVAL);
  return libbpf_return(rb->consumer->poll(timeout_ms));
}

int userperf_ring_buffer_consume(struct userperf_ring_buffer* rb) {
  if (rb == nullptr) return libbpf_return(-EINVAL);
  return libbpf_return(rb->consumer->consume());
}

int userperf_ring_buffer_epoll_fd(const struct userperf_ring_buffer* rb) {
  if (rb == nullptr) return libbpf_return(-EINVAL);
  return rb->consumer->epoll_fd();
}

void userperf_ring_buffer_free(struct userperf_ring_buffer* rb) {
  delete rb;
}

void userperf_bpf_set_trace_fd(int fd) {
  userperf::bpf::set_trace_printk_fd(fd);
}

}  // extern "C"
