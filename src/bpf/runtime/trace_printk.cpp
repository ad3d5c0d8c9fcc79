// SIGNAL-SAFE: see trace_printk.hpp.
#include "bpf/runtime/trace_printk.hpp"

#include <cerrno>
#include <cstring>

#include "support/user_memory.hpp"

namespace userperf::bpf {

namespace {

class Out {
 public:
  Out(char* buf, std::size_t size) : buf_(buf), size_(size) {}
  void put(char c) {
    if (len_ + 1 < size_) buf_[len_] = c;
    ++len_;
  }
  void pad(int width, std::size_t used, char fill) {
    for (std::size_t i = used; static_cast<int>(i) < width; ++i) put(fill);
  }
  std::size_t finish() {
    if (size_ == 0) return 0;
    const std::size_t n = len_ < size_ ? len_ : size_ - 1;
    buf_[n] = '\0';
    return n;
  }

 private:
  char* buf_;
  std::size_t size_;
  std::size_t len_ = 0;
};

struct Spec {
  bool left = false;
  bool plus = false;
  bool space = false;
  char fill = ' ';
  int width = 0;
};

void put_number(Out& out, const Spec& spec, std::uint64_t value, bool negative, unsigned base,
                bool upper) {
  char digits[24];
  std::size_t n = 0;
  const char* set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  do {
    digits[n++] = set[value % base];
    value /= base;
  } while (value != 0);
  const char sign = negative ? '-' : spec.plus ? '+' : spec.space ? ' ' : '\0';
  const std::size_t used = n + (sign ? 1 : 0);
  if (!spec.left && spec.fill == ' ') out.pad(spec.width, used, ' ');
  if (sign) out.put(sign);
  if (!spec.left && spec.fill == '0') out.pad(spec.width, used, '0');
  while (n > 0) out.put(digits[--n]);
  if (spec.left) out.pad(spec.width, used, ' ');
}

// %s: read through the non-faulting reader (at most 63 bytes); an unreadable address prints
// nothing, as the kernel's nofault string copy.
void put_string(Out& out, const Spec& spec, std::uint64_t addr) {
  char str[64];
  const long copied =
      support::read_user_string(reinterpret_cast<const void*>(addr), str, sizeof str);
  const std::size_t n = copied > 0 ? static_cast<std::size_t>(copied - 1) : 0;
  if (!spec.left) out.pad(spec.width, n, ' ');
  for (std::size_t i = 0; i < n; ++i) out.put(str[i]);
  if (spec.left) out.pad(spec.width, n, ' ');
}

bool printable(char c) {
  return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

long format_trace_printk(const char* fmt, std::uint32_t fmt_size, const std::uint64_t args[3],
                         char* buf, std::size_t buf_size) {
  if (fmt_size == 0 || std::memchr(fmt, '\0', fmt_size) == nullptr) return -EINVAL;
  Out out(buf, buf_size);
  int used_args = 0;
  for (std::size_t i = 0; fmt[i] != '\0'; ++i) {
    if (!printable(fmt[i])) return -EINVAL;
    if (fmt[i] != '%') {
      out.put(fmt[i]);
      continue;
    }
    ++i;
    if (fmt[i] == '%') {
      out.put('%');
      continue;
    }
    Spec spec;
    for (;; ++i) {
      if (fmt[i] == '-') {
        spec.left = true;
      } else if (fmt[i] == '+') {
        spec.plus = true;
      } else if (fmt[i] == ' ') {
        spec.space = true;
      } else if (fmt[i] == '0') {
        spec.fill = '0';
      } else {
        break;
      }
    }
    while (fmt[i] >= '0' && fmt[i] <= '9' && spec.width < 1000) {
      spec.width = spec.width * 10 + (fmt[i++] - '0');
    }
    int longs = 0;
    while (fmt[i] == 'l' && longs < 2) {
      ++longs;
      ++i;
    }
    const char conv = fmt[i];
    if (conv != 'd' && conv != 'i' && conv != 'u' && conv != 'x' && conv != 'X' && conv != 'c' &&
        conv != 's' && conv != 'p') {
      return -EINVAL;
    }
    if (used_args == 3) return -EINVAL;
    std::uint64_t value = args[used_args++];
    // Without l/ll the argument is an int: the upper half is not part of it.
    if (longs == 0 && conv != 's' && conv != 'p') value &= 0xffffffffu;
    switch (conv) {
      case 'd':
      case 'i': {
        const auto v = longs == 0 ? static_cast<std::int64_t>(static_cast<std::int32_t>(value))
                                  : static_cast<std::int64_t>(value);
        put_number(out, spec,
                   v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v), v < 0,
                   10, false);
        break;
      }
      case 'u':
        put_number(out, spec, value, false, 10, false);
        break;
      case 'x':
      case 'X':
        put_number(out, spec, value, false, 16, conv == 'X');
        break;
      case 'p':
        out.put('0');
        out.put('x');
        put_number(out, spec, value, false, 16, false);
        break;
      case 'c':
        out.put(static_cast<char>(value));
        break;
      case 's':
        put_string(out, spec, value);
        break;
    }
  }
  return static_cast<long>(out.finish());
}

}  // namespace userperf::bpf
