// A fuzz input read front to back as a script of little-endian fields, so that seeds can be written
// by hand (fuzz/corpus/make_seeds.py): unlike FuzzedDataProvider, which takes integers from the
// end. A field past the end of the input reads as zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace userperf::fuzz {

class ByteScript {
 public:
  ByteScript(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::size_t remaining() const { return size_ - pos_; }

  // sizeof(T) bytes, little-endian.
  template <class T>
  T take() {
    using U = std::make_unsigned_t<T>;
    U value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      value |= static_cast<U>(static_cast<U>(next_byte()) << (8 * i));
    }
    return static_cast<T>(value);
  }
  // min + (field % (max - min + 1)), the field as wide as the range needs (1, 2, 4 or 8 bytes).
  template <class T>
  T range(T min, T max) {
    const std::uint64_t span = static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min);
    std::uint64_t raw;
    if (span <= 0xff) {
      raw = take<std::uint8_t>();
    } else if (span <= 0xffff) {
      raw = take<std::uint16_t>();
    } else if (span <= 0xffffffff) {
      raw = take<std::uint32_t>();
    } else {
      raw = take<std::uint64_t>();
    }
    const std::uint64_t offset = span == ~std::uint64_t{0} ? raw : raw % (span + 1);
    return static_cast<T>(static_cast<std::uint64_t>(min) + offset);
  }
  bool flag() { return (next_byte() & 1) != 0; }
  // Up to n bytes (fewer at the end of the input), in place.
  std::span<const std::uint8_t> bytes(std::size_t n) {
    if (n > remaining()) n = remaining();
    std::span<const std::uint8_t> out(data_ + pos_, n);
    pos_ += n;
    return out;
  }

 private:
  std::uint8_t next_byte() { return pos_ < size_ ? data_[pos_++] : 0; }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace userperf::fuzz
