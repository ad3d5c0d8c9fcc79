// Bounded reads from untrusted bytes of a file: each read checks the remaining length first and the
// first failure sticks, recording the file offset where it happened.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace userperf::perfdata {

class ByteCursor {
 public:
  // `bytes` starts at file offset `base`.
  ByteCursor(std::span<const std::uint8_t> bytes, std::uint64_t base)
      : bytes_(bytes), base_(base) {}

  bool ok() const { return failed_at_ == kNone; }
  // File offset of the read that failed (valid when !ok()).
  std::uint64_t failed_at() const { return failed_at_; }
  std::uint64_t offset() const { return base_ + pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }

  template <class T>
  bool read(T& value) {
    if (!take(sizeof value)) return false;
    std::memcpy(&value, bytes_.data() + pos_ - sizeof value, sizeof value);
    return true;
  }

  // perf's {u32 len; char s[len]}: the text ends at the first NUL inside len (or at len).
  bool string(std::string& out) {
    std::uint32_t len = 0;
    if (!read(len) || !take(len)) return false;
    if (len == 0) {
      out.clear();
      return true;
    }
    const char* text = reinterpret_cast<const char*>(bytes_.data() + pos_ - len);
    out.assign(text, strnlen(text, len));
    return true;
  }

  // A NUL-terminated string ending inside the remaining bytes (or at their end); the cursor moves
  // past the NUL, not past padding.
  bool c_string(std::string& out) {
    if (!ok()) return false;
    if (remaining() == 0) {
      out.clear();
      return true;
    }
    const char* text = reinterpret_cast<const char*>(bytes_.data() + pos_);
    const std::size_t len = strnlen(text, remaining());
    out.assign(text, len);
    pos_ += std::min(len + 1, remaining());
    return true;
  }

  bool take(std::size_t n) {
    if (!ok()) return false;
    if (n > remaining()) {
      failed_at_ = offset();
      return false;
    }
    pos_ += n;
    return true;
  }

 private:
  static constexpr std::uint64_t kNone = ~0ULL;
  std::span<const std::uint8_t> bytes_;
  std::uint64_t base_;
  std::size_t pos_ = 0;
  std::uint64_t failed_at_ = kNone;
};

}  // namespace userperf::perfdata
