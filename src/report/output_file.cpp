#include "report/output_file.hpp"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace userperf::report {

namespace {

Error io_error(int code, const std::string& what) {
  return Error{code, what + ": " + std::strerror(code)};
}

}  // namespace

Expected<void> write_output_file(const std::string& path,
                                 const std::function<Expected<void>(std::FILE*)>& write) {
  if (path == "-") {
    if (Expected<void> written = write(stdout); !written) return written;
    if (std::fflush(stdout) != 0) return io_error(errno, "stdout");
    return {};
  }
  std::string temporary = path + ".XXXXXX";
  const int fd = mkstemp(temporary.data());
  if (fd < 0) return io_error(errno, "cannot create a file beside " + path);
  std::FILE* file = fdopen(fd, "w");
  if (file == nullptr) {
    const int code = errno;
    close(fd);
    unlink(temporary.c_str());
    return io_error(code, temporary);
  }
  Expected<void> written = write(file);
  int code = 0;
  if (written && (std::fflush(file) != 0 || std::ferror(file) || fsync(fileno(file)) != 0)) {
    code = errno != 0 ? errno : EIO;
  }
  // mkstemp makes the file 0600; the output is an ordinary file of the user's (umask applies).
  const mode_t mask = umask(0);
  umask(mask);
  if (written && code == 0 && fchmod(fileno(file), 0666 & ~mask) != 0) code = errno;
  if (std::fclose(file) != 0 && written && code == 0) code = errno;
  if (written && code == 0 && std::rename(temporary.c_str(), path.c_str()) != 0) code = errno;
  if (!written || code != 0) {
    unlink(temporary.c_str());
    return written ? Expected<void>(io_error(code, path)) : written;
  }
  return {};
}

}  // namespace userperf::report
