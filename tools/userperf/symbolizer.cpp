#include "symbolizer.hpp"

#include <dlfcn.h>

#include <cstdio>

#include "report/demangle.hpp"

namespace userperf::cli {

std::string symbol_name(std::uint64_t ip) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(ip), &info) != 0 && info.dli_sname != nullptr) {
    return report::demangle(info.dli_sname);
  }
  char hex[24];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(ip));
  return hex;
}

}  // namespace userperf::cli
