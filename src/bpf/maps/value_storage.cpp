#include "bpf/maps/value_storage.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <limits>
#include <utility>

namespace userperf::bpf {

Expected<ValueStorage> ValueStorage::allocate(std::uint64_t size) {
  ValueStorage storage;
  if (size == 0) return storage;
  if (size > std::numeric_limits<std::size_t>::max() / 2) {
    return make_error(ENOMEM, "map storage of " + std::to_string(size) + " bytes is too large");
  }
  void* memory = mmap(nullptr, static_cast<std::size_t>(size), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    return make_error(ENOMEM, "cannot allocate " + std::to_string(size) + " bytes of map storage");
  }
  storage.data_ = static_cast<std::uint8_t*>(memory);
  storage.size_ = static_cast<std::size_t>(size);
  return storage;
}

ValueStorage::~ValueStorage() {
  if (data_ != nullptr) munmap(data_, size_);
}

ValueStorage::ValueStorage(ValueStorage&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

ValueStorage& ValueStorage::operator=(ValueStorage&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, size_);
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
