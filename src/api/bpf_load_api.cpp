// userperf_bpf_prog_load: an object file through the ELF loader (libbpf, libelf), then the
// process-wide registry. A file of its own, in the `userperf` library but not in the agent's
// `userperf_api`: the agent preloaded into every recorded process loads --bpf programs from the
// image the recorder wrote, and so links no ELF loader.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "api/engine_instance.hpp"
#include "bpf/loader/elf_loader.hpp"
#include "bpf/perf/bpf_registry.hpp"
#include "support/expected.hpp"
#include "userperf/userperf.h"

extern "C" {

int userperf_bpf_prog_load(const char* path, const char* prog_name, char* log_buf,
                           size_t log_size) {
  std::string log;
  int rc = -EINVAL;
  if (path != nullptr) {
    auto image = userperf::bpf::load_elf_file(path);
    if (!image) {
      log = image.error().message;
      rc = -image.error().code;
    } else {
      rc = userperf::api::bpf_registry().load_program(std::move(*image), prog_name ? prog_name : "",
                                                      &log);
    }
  }
  if (log_buf != nullptr && log_size > 0) {
    const std::size_t n = std::min(log.size(), log_size - 1);
    std::memcpy(log_buf, log.data(), n);
    log_buf[n] = '\0';
  }
  return userperf::syscall_return(rc);
}

}  // extern "C"
