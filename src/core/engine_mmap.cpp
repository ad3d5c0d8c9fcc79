// Engine's memory family: mmap and munmap of an event (the data ring's control and data pages, the
// AUX area), the buffers and mappings behind them, the descriptors of their memory and wakeups, the
// consumer's AUX snapshot, and the rings made before any mapping (defer_ring, the fork child's
// spare ring). The kernel's perf_mmap/perf_mmap_close (core.c) and rb_alloc_aux/rb_free_aux
// (ring_buffer.c).
#include "core/engine.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>

#include "ring/aux_reader.hpp"
#include "support/expected.hpp"
#include "support/user_memory.hpp"

namespace userperf::core {

namespace {

// The ring an event's attr asks for (perf_mmap: overwrite when mapped read-only).
ring::RingConfig ring_config_of(const Event& event, bool overwrite) {
  ring::RingConfig config;
  config.overwrite = overwrite;
  config.backward = event.attr.write_backward;
  config.watermark = event.attr.watermark ? event.attr.wakeup_watermark : 0;
  // A per-thread event's ring: every event SET_OUTPUT may add samples the same thread
  // (check_output), and its PMU writes on that thread; a write from any other makes it shared.
  if (event.cpu == -1 && event.pid > 0) config.single_writer = event.pid;
  return config;
}

// A forward ring with no memory yet (DataRing::create_deferred), counted as mapped once: what
// defer_ring gives an event and make_spare_ring keeps for a fork child. 0, or -errno (out unset).
int deferred_buffer(const Event& like, std::size_t data_pages, std::unique_ptr<Buffer>& out) {
  auto created = std::make_unique<Buffer>();
  if (const int rc =
          ring::DataRing::create_deferred(data_pages, ring_config_of(like, false), created->ring);
      rc != 0) {
    return rc;
  }
  created->deferred = true;
  created->mappings = 1;
  out = std::move(created);
  return 0;
}

bool is_power_of_two(std::size_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}

}  // namespace

// ---- mmap / munmap ---------------------------------------------------------------------------

void* Engine::mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  std::lock_guard lock(mutex_);
  Event* ev = lookup(fd);
  if (ev == nullptr) return err_ptr(-EBADF);
  Event& event = *ev;
  const std::size_t page = ring::page_size();
  if (length == 0 || offset < 0 || static_cast<std::size_t>(offset) % page != 0) {
    return err_ptr(-EINVAL);
  }
  const std::size_t pages = (length + page - 1) / page;  // mmap(2) rounds the length up
  // perf_mmap: inherited per-task events would write into one buffer from many CPUs.
  if (event.cpu == -1 && event.attr.inherit) return err_ptr(-EINVAL);
  if ((flags & MAP_TYPE) != MAP_SHARED && (flags & MAP_TYPE) != MAP_SHARED_VALIDATE) {
    return err_ptr(-EINVAL);
  }
  if (offset != 0) return mmap_aux(event, addr, pages, prot, flags, offset);
  const std::size_t data_pages = pages - 1;
  if (data_pages != 0 && !is_power_of_two(data_pages)) return err_ptr(-EINVAL);
  Buffer* buffer = event.buffer;
  if (buffer != nullptr) {
    if (buffer->ring->data_pages() != data_pages) return err_ptr(-EINVAL);
    if (event.own_mappings == 0) return err_ptr(-EBUSY);  // an alias of another event's mmap
  } else {
    const ring::RingConfig config = ring_config_of(event, (prot & PROT_WRITE) == 0);
    auto created = std::make_unique<Buffer>();
    if (const int rc = ring::DataRing::create(data_pages, config, created->ring); rc != 0) {
      return err_ptr(rc);
    }
    created->owner = &event;
    buffer = created.get();
    buffers_.push_back(std::move(created));
  }
  void* base = ring::map_for_consumer(addr, pages * page, (prot & PROT_WRITE) != 0, flags,
                                      buffer->ring->memfd());
  if (base == MAP_FAILED) {
    const int err = errno;
    if (buffer->mappings == 0) release_buffer(buffer);
    return err_ptr(-err);
  }
  if (buffer->mappings++ == 0) {
    event.buffer = buffer;
    buffer->events.push_back(&event);
    event.rb.store(buffer->ring.get(), std::memory_order_release);
  }
  ++event.own_mappings;
  mappings_.push_back({reinterpret_cast<std::uintptr_t>(base), pages * page, buffer, &event});
  update_user_page(event);
  return base;
}

// perf_mmap's AUX branch and rb_alloc_aux, with the kernel's checks in its order.
void* Engine::mmap_aux(Event& event, void* addr, std::size_t pages, int prot, int flags,
                       std::uint64_t offset) {
  Buffer* buffer = event.buffer;
  if (buffer == nullptr) return err_ptr(-EINVAL);
  const perf_event_mmap_page* page = buffer->ring->control();
  const std::uint64_t aux_offset = __atomic_load_n(&page->aux_offset, __ATOMIC_ACQUIRE);
  const std::uint64_t aux_size = __atomic_load_n(&page->aux_size, __ATOMIC_ACQUIRE);
  const std::size_t page_bytes = ring::page_size();
  if (aux_offset < buffer->ring->data_size() + page_bytes) return err_ptr(-EINVAL);
  if (aux_offset != offset) return err_ptr(-EINVAL);
  if (buffer->aux != nullptr && buffer->aux_pgoff != offset / page_bytes) return err_ptr(-EINVAL);
  if (aux_size != pages * page_bytes) return err_ptr(-EINVAL);
  if (buffer->aux != nullptr && buffer->aux->pages() != pages) return err_ptr(-EINVAL);
  if (!is_power_of_two(pages)) return err_ptr(-EINVAL);
  if (buffer->mappings == 0) return err_ptr(-EINVAL);
  if (buffer->aux == nullptr) {
    // rb_alloc_aux: the PMU must have AUX support; read-only means overwrite mode.
    if (!event.pmu->has_aux()) return err_ptr(-EOPNOTSUPP);
    std::unique_ptr<ring::AuxRing> aux;
    if (const int rc =
            ring::AuxRing::create(pages, (prot & PROT_WRITE) == 0, event.attr.aux_watermark,
                                  buffer->ring->control(), aux);
        rc != 0) {
      return err_ptr(rc);
    }
    if (const int rc = event.pmu->setup_aux(event, *aux); rc != 0) return err_ptr(rc);
    buffer->aux = std::move(aux);
    buffer->aux_pgoff = offset / page_bytes;
    buffer->ring->set_aux(buffer->aux.get());
  }
  const int map_flags = MAP_SHARED | (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_POPULATE));
  void* base = ::mmap(addr, pages * page_bytes, prot & (PROT_READ | PROT_WRITE), map_flags,
                      buffer->aux->memfd(), 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    if (buffer->aux_mappings == 0) free_aux(*buffer);
    return err_ptr(-err);
  }
  ++buffer->mappings;
  ++buffer->aux_mappings;
  mappings_.push_back(
      {reinterpret_cast<std::uintptr_t>(base), pages * page_bytes, buffer, &event, true});
  return base;
}

// The AUX area's last mapping went away (perf_mmap_close): the PMU stops writing into it, and once
// no writer can still hold it, it is freed.
void Engine::free_aux(Buffer& buffer) {
  buffer.ring->set_aux(nullptr);  // no new handle begins on it
  // Every source writing into the buffer lets go of the handle it may hold on the area (an event
  // redirected into this buffer may hold it as well as the one that mapped it).
  for (Event* writer : buffer.events) {
    if (writer->pmu->has_aux()) writer->pmu->free_aux(*writer);
  }
  grace_.synchronize();
  buffer.aux.reset();
}

int Engine::munmap(void* addr, std::size_t length) {
  std::unique_lock lock(mutex_);
  const auto start = reinterpret_cast<std::uintptr_t>(addr);
  const std::size_t page = ring::page_size();
  const std::size_t rounded = (length + page - 1) / page * page;
  const auto it = std::find_if(mappings_.begin(), mappings_.end(), [&](const Mapping& m) {
    return start < m.start + m.length && start + rounded > m.start;
  });
  if (it == mappings_.end()) {
    lock.unlock();
    return ::munmap(addr, length) == 0 ? 0 : -errno;
  }
  // The kernel refuses to split a perf mapping.
  if (it->start != start || it->length != rounded) return -EINVAL;
  if (::munmap(addr, length) != 0) return -errno;
  Buffer* buffer = it->buffer;
  const bool aux = it->aux;
  if (it->event != nullptr && !aux) --it->event->own_mappings;
  mappings_.erase(it);
  if (aux && --buffer->aux_mappings == 0) free_aux(*buffer);
  if (--buffer->mappings == 0) release_buffer(buffer);
  return 0;
}

// The last mapping went away: every event writing into the buffer is detached and, once no writer
// can still hold it, the ring is freed (consumers in other processes see POLLHUP).
void Engine::release_buffer(Buffer* buffer) {
  while (!buffer->events.empty()) detach_output(*buffer->events.back());
  grace_.synchronize();
  buffer->ring->hang_up();
  std::erase_if(buffers_, [buffer](const auto& b) { return b.get() == buffer; });
}

// ---- the memory's descriptors, the AUX snapshot ----------------------------------------------

int Engine::buffer_descriptor(int fd, int (*of)(const Buffer& buffer)) {
  std::lock_guard lock(mutex_);
  Event* ev = lookup(fd);
  if (ev == nullptr) return -EBADF;
  if (ev->buffer == nullptr) return -EINVAL;
  return of(*ev->buffer);
}

int Engine::aux_fd(int fd) {
  return buffer_descriptor(
      fd, [](const Buffer& b) { return b.aux != nullptr ? b.aux->memfd() : -EINVAL; });
}

int Engine::ring_fd(int fd) {
  return buffer_descriptor(fd, [](const Buffer& b) { return b.ring->memfd(); });
}

int Engine::wakeup_fd(int fd) {
  return buffer_descriptor(fd, [](const Buffer& b) { return b.ring->wakeup_fd(); });
}

ssize_t Engine::aux_snapshot(int fd, void* buf, std::size_t len, std::uint64_t* head_out) {
  std::lock_guard lock(mutex_);
  Event* ev = lookup(fd);
  if (ev == nullptr) return -EBADF;
  if (ev->buffer == nullptr || ev->buffer->aux == nullptr || (buf == nullptr && len != 0)) {
    return -EINVAL;
  }
  const ring::AuxRing& aux = *ev->buffer->aux;
  // Disable: the source ends its handle, which publishes aux_head; nothing writes until enable.
  const bool was_enabled = ev->state.load() >= EventState::kInactive;
  disable(*ev);
  const std::uint64_t head =
      std::atomic_ref<const __u64>(ev->buffer->ring->control()->aux_head).load();
  const std::uint64_t n = std::min<std::uint64_t>({len, aux.size(), head});
  bool faulted = false;
  std::uint64_t done = 0;
  ring::for_each_aux_piece(head, n, aux.size(), [&](std::uint64_t offset, std::uint64_t piece) {
    faulted |=
        !support::write_user(static_cast<std::uint8_t*>(buf) + done, aux.data() + offset, piece);
    done += piece;
  });
  if (was_enabled) enable(*ev);
  if (faulted) return -EFAULT;
  if (head_out != nullptr && !support::write_user(head_out, &head, sizeof head)) return -EFAULT;
  return static_cast<ssize_t>(n);
}

// ---- rings made before a mapping -------------------------------------------------------------

int Engine::defer_ring(int fd, std::size_t data_pages) {
  std::lock_guard lock(mutex_);
  Event* ev = lookup(fd);
  if (ev == nullptr) return -EBADF;
  Event& event = *ev;
  if (event.buffer != nullptr) return -EBUSY;
  // perf_mmap's checks that hold without a mapping: as mmap would answer them.
  if (event.cpu == -1 && event.attr.inherit) return -EINVAL;
  std::unique_ptr<Buffer> created;
  if (const int err = deferred_buffer(event, data_pages, created); err != 0) return err;
  created->owner = &event;
  Buffer* buffer = created.get();
  buffers_.push_back(std::move(created));
  event.buffer = buffer;
  buffer->events.push_back(&event);
  return 0;
}

int Engine::materialize_ring(Event& event) {
  Buffer* buffer = event.buffer;
  if (buffer == nullptr || buffer->ring == nullptr) return -EINVAL;
  ring::DataRing& ring = *buffer->ring;
  if (!ring.materialized()) {
    if (const int err = ring.materialize(); err != 0) return err;
    // The events were given the buffer when no memory existed: they write from here on.
    for (Event* e : buffer->events) e->rb.store(&ring, std::memory_order_release);
  }
  return ring.memfd();
}

Buffer* Engine::make_spare_ring(const Event& like, std::size_t data_pages, int max_events) {
  std::unique_ptr<Buffer> created;
  if (deferred_buffer(like, data_pages, created) != 0) return nullptr;
  created->events.reserve(static_cast<std::size_t>(max_events));
  return created.release();
}

void Engine::drop_spare_ring(Buffer* spare) {
  if (spare != nullptr && spare->events.empty()) delete spare;
}

void Engine::adopt_spare_ring(Event* const* events, int n, int owner, Buffer* spare) {
  for (int i = 0; i < n; ++i) {
    Event& event = *events[i];
    event.rb.store(nullptr, std::memory_order_release);
    if (Buffer* old = event.buffer) {
      std::erase(old->events, &event);
      if (old->owner == &event) old->owner = nullptr;
    }
    event.buffer = spare;
    if (spare->events.size() < spare->events.capacity()) spare->events.push_back(&event);
  }
  spare->owner = events[owner];
}

}  // namespace userperf::core
