// ByteReader: bounded reads from bytes nobody vouches for (a file, a record another process wrote,
// an encoded image). Every read checks the remaining length first; the first failure sticks and
// records where it happened, so a decoder may read on and check once. Counts read from the input
// are checked by division before anything is allocated. Not for the signal path (it may allocate
// into the caller's vector or string).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace userperf::support {

class ByteReader {
 public:
  // `bytes` starts at offset `base` of whatever it came from (a file offset, a record offset).
  explicit ByteReader(std::span<const std::uint8_t> bytes, std::uint64_t base = 0)
      : bytes_(bytes), base_(base) {}

  bool ok() const { return failed_at_ == kNone; }
  // Offset of the read that failed (valid when !ok()).
  std::uint64_t failed_at() const { return failed_at_; }
  // Offset of the next read: base + bytes consumed.
  std::uint64_t offset() const { return base_ + pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  bool done() const { return ok() && remaining() == 0; }

  template <class T>
  bool read(T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::span<const std::uint8_t> raw;
    if (!bytes(sizeof value, raw)) return false;
    std::memcpy(&value, raw.data(), sizeof value);
    return true;
  }

  // The next `n` bytes, in place.
  bool bytes(std::size_t n, std::span<const std::uint8_t>& out) {
    if (!fits(n, 1)) return false;
    out = bytes_.subspan(pos_, n);
    pos_ += n;
    return true;
  }

  bool skip(std::size_t n) {
    std::span<const std::uint8_t> unused;
    return bytes(n, unused);
  }

  // `count` elements of T copied out (the count came from the input: checked first).
  template <class T>
  bool read_array(std::uint64_t count, std::vector<T>& out) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (!fits(count, sizeof(T))) return false;
    out.resize(count);
    if (count != 0) std::memcpy(out.data(), bytes_.data() + pos_, count * sizeof(T));
    pos_ += count * sizeof(T);
    return true;
  }

  // Whether `count` elements of `element` bytes remain; fails the reader if not. Checked by
  // division, so a huge count cannot wrap the multiplication.
  bool fits(std::uint64_t count, std::size_t element) {
    if (!ok()) return false;
    if (element != 0 && count > remaining() / element) return fail();
    return true;
  }

  // A NUL-terminated string ending inside the remaining bytes (or at their end); the reader moves
  // past the NUL, not past padding.
  bool c_string(std::string& out) {
    if (!ok()) return false;
    const char* text = reinterpret_cast<const char*>(bytes_.data() + pos_);
    const std::size_t len = strnlen(text, remaining());
    out.assign(text, len);
    pos_ += len < remaining() ? len + 1 : len;
    return true;
  }

  // Fails the reader at the current offset (a value that contradicts the format).
  bool fail() {
    if (ok()) failed_at_ = offset();
    return false;
  }

 private:
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  std::span<const std::uint8_t> bytes_;
  std::uint64_t base_;
  std::size_t pos_ = 0;
  std::uint64_t failed_at_ = kNone;
};

}  // namespace userperf::support
