// userperf C++ layer: RAII owners over the syscall-mirror C API of userperf.h.
//
//   perf_event_attr attr{};                       // the kernel's struct, filled as for the kernel
//   ...
//   userperf::Event event(attr);                  // pid 0 (this thread), any CPU; throws on error
//   userperf::Mapping ring(event, 16);            // 1 control page + 16 data pages
//   event.enable();
//
// Errors throw std::system_error carrying the kernel's errno for that case. Header-only: it adds
// ownership and nothing else, so every behaviour is the C API's.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>
#include <system_error>
#include <utility>

#include "userperf/userperf.h"

namespace userperf {

[[noreturn]] inline void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Owns one userperf event handle; closing it closes the event.
class Event {
 public:
  explicit Event(perf_event_attr attr, pid_t pid = 0, int cpu = -1, const Event* group = nullptr,
                 unsigned long flags = 0)
      : fd_(userperf_perf_event_open(&attr, pid, cpu, group != nullptr ? group->fd() : -1, flags)) {
    if (fd_ < 0) throw_errno("userperf_perf_event_open");
  }
  ~Event() {
    if (fd_ >= 0) userperf_close(fd_);
  }
  Event(Event&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Event& operator=(Event&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) userperf_close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  int fd() const { return fd_; }

  void enable() { ioctl(PERF_EVENT_IOC_ENABLE, 0, "PERF_EVENT_IOC_ENABLE"); }
  void disable() { ioctl(PERF_EVENT_IOC_DISABLE, 0, "PERF_EVENT_IOC_DISABLE"); }
  void reset() { ioctl(PERF_EVENT_IOC_RESET, 0, "PERF_EVENT_IOC_RESET"); }
  void refresh(int overflows) {
    ioctl(PERF_EVENT_IOC_REFRESH, static_cast<unsigned long>(overflows), "PERF_EVENT_IOC_REFRESH");
  }
  void set_period(std::uint64_t period) {
    ioctl(PERF_EVENT_IOC_PERIOD, reinterpret_cast<unsigned long>(&period), "PERF_EVENT_IOC_PERIOD");
  }
  void pause_output(bool paused) {
    ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, paused ? 1 : 0, "PERF_EVENT_IOC_PAUSE_OUTPUT");
  }
  // Sends this event's records into `target`'s buffer (PERF_EVENT_IOC_SET_OUTPUT).
  void set_output(const Event& target) {
    ioctl(PERF_EVENT_IOC_SET_OUTPUT, static_cast<unsigned long>(target.fd()),
          "PERF_EVENT_IOC_SET_OUTPUT");
  }
  std::uint64_t id() const {
    std::uint64_t value = 0;
    if (userperf_ioctl(fd_, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&value)) != 0) {
      throw_errno("PERF_EVENT_IOC_ID");
    }
    return value;
  }
  // read(2) in the event's read_format; returns the bytes read.
  std::size_t read(std::span<std::uint64_t> values) const {
    const ssize_t n = userperf_read(fd_, values.data(), values.size_bytes());
    if (n < 0) throw_errno("userperf_read");
    return static_cast<std::size_t>(n);
  }

 private:
  void ioctl(unsigned long request, unsigned long arg, const char* what) {
    if (userperf_ioctl(fd_, request, arg) != 0) throw_errno(what);
  }

  int fd_ = -1;
};

// Owns a mapping of an event's buffer: the control page and 2^n data pages. Read-write by default
// (the consumer advances data_tail); PROT_READ alone selects overwrite mode, as with the kernel.
class Mapping {
 public:
  Mapping(const Event& event, std::size_t data_pages, int prot = PROT_READ | PROT_WRITE)
      : length_((data_pages + 1) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE))) {
    base_ = userperf_mmap(nullptr, length_, prot, MAP_SHARED, event.fd(), 0);
    if (base_ == MAP_FAILED) throw_errno("userperf_mmap");
  }
  ~Mapping() {
    if (base_ != MAP_FAILED) userperf_munmap(base_, length_);
  }
  Mapping(Mapping&& other) noexcept
      : base_(std::exchange(other.base_, MAP_FAILED)), length_(other.length_) {}
  Mapping& operator=(Mapping&&) = delete;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  perf_event_mmap_page* control() const { return static_cast<perf_event_mmap_page*>(base_); }
  // The data area, located through the control page as a kernel consumer does.
  std::span<const std::uint8_t> data() const {
    const auto* base = static_cast<const std::uint8_t*>(base_);
    return {base + control()->data_offset, static_cast<std::size_t>(control()->data_size)};
  }
  std::size_t length() const { return length_; }

 private:
  void* base_ = MAP_FAILED;
  std::size_t length_ = 0;
};

}  // namespace userperf
