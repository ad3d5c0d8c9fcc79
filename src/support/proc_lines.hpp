// Line-by-line reading of a /proc text file (maps, mountinfo) on the signal path: open/read/close
// and a window on the stack; no allocation, no lock, no stdio. SIGNAL-SAFE when `on_line` is.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace userperf::support {

inline constexpr std::size_t kProcLineWindow = 4096;

// Calls on_line(char* begin, char* end, bool cut) for each line of the file at `path`, `*end`
// replaced by a NUL; a true return stops the reading. A line of kProcLineWindow bytes or more (no
// newline in a full window) is passed once, its first kProcLineWindow bytes with cut = true, and
// the rest of it is skipped: a caller that needs only a line's start (/proc/self/maps' address
// range) can still use it. A read interrupted by a signal is retried. False when the file cannot
// be opened.
template <typename OnLine>
bool for_each_proc_line(const char* path, OnLine&& on_line) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[kProcLineWindow + 1];  // + the NUL after a cut line
  std::size_t have = 0;
  bool eof = false;
  bool in_long_line = false;  // the rest of a cut line: not a line start
  for (bool stop = false; !stop && !(eof && have == 0);) {
    if (!eof && have < kProcLineWindow) {
      const ssize_t n = ::read(fd, buf + have, kProcLineWindow - have);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof = true;
      } else {
        have += static_cast<std::size_t>(n);
      }
    }
    auto* nl = static_cast<char*>(std::memchr(buf, '\n', have));
    const bool cut = nl == nullptr && have == kProcLineWindow;
    if (nl == nullptr && !cut && !eof) continue;  // a line start without its end yet
    if (have == 0) continue;  // the end of the file: the loop's condition ends it
    const std::size_t line = nl != nullptr ? static_cast<std::size_t>(nl - buf) : have;
    buf[line] = '\0';
    if (!in_long_line) stop = on_line(buf, buf + line, cut);
    in_long_line = cut || (in_long_line && nl == nullptr);
    const std::size_t consumed = nl != nullptr ? line + 1 : line;
    std::memmove(buf, buf + consumed, have - consumed);
    have -= consumed;
  }
  ::close(fd);
  return true;
}

}  // namespace userperf::support
