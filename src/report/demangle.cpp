#include "report/demangle.hpp"

#include <cxxabi.h>

#include <cstdlib>

namespace userperf::report {

std::string demangle(const char* name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && out != nullptr ? out : name;
  std::free(out);
  return result;
}

}  // namespace userperf::report
