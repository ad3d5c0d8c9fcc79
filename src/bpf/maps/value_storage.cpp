#include "bpf/maps/value_storage.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <limits>
#include <utility>

namespace userperf::bpf {

Expected<ValueStorage> ValueStorage::allocate(std::uint64_t size) {
  ValueStorage storage;
  if (size == 0) return storage;
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (size > std::numeric_limits<std::size_t>::max() / 2) {
    return make_error(ENOMEM, "map storage of " + std::to_string(size) + " bytes is too large");
  }
  const std::size_t used = (static_cast<std::size_t>(size) + 7) & ~std::size_t{7};
  const std::size_t pages = (used + page - 1) / page * page;
  const std::size_t mapped = pages + 2 * page;
  void* memory = mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  auto* base = static_cast<std::uint8_t*>(memory);
  if (memory == MAP_FAILED || mprotect(base + page, pages, PROT_READ | PROT_WRITE) != 0) {
    if (memory != MAP_FAILED) munmap(memory, mapped);
    return make_error(ENOMEM, "cannot allocate " + std::to_string(size) + " bytes of map storage");
  }
  storage.mapping_ = base;
  storage.mapped_ = mapped;
  storage.data_ = base + page + (pages - used);
  storage.size_ = static_cast<std::size_t>(size);
  return storage;
}

void ValueStorage::release() {
  if (mapping_ != nullptr) munmap(mapping_, mapped_);
  mapping_ = nullptr;
  mapped_ = 0;
  data_ = nullptr;
  size_ = 0;
}

ValueStorage::~ValueStorage() {
  release();
}

ValueStorage::ValueStorage(ValueStorage&& other) noexcept
    : mapping_(std::exchange(other.mapping_, nullptr)),
      mapped_(std::exchange(other.mapped_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

ValueStorage& ValueStorage::operator=(ValueStorage&& other) noexcept {
  if (this != &other) {
    release();
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapped_ = std::exchange(other.mapped_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MemoryRegion ValueStorage::region(bool writable) const {
  auto begin = reinterpret_cast<std::uintptr_t>(data_);
  return MemoryRegion{begin, begin + size_, writable && size_ != 0};
}

}  // namespace userperf::bpf
