#include "symbolizer.hpp"

#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace userperf::cli {

std::string symbol_name(std::uint64_t ip) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(ip), &info) != 0 && info.dli_sname != nullptr) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled(
        abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status), &std::free);
    return status == 0 ? demangled.get() : info.dli_sname;
  }
  char hex[24];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(ip));
  return hex;
}

}  // namespace userperf::cli
