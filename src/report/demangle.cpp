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

std::string demangle_without_parameters(const char* name) {
  std::string full = demangle(name);
  if (full == name) return full;  // not a mangled name: a C function keeps its name
  // Qualifiers of a member function come after its parameters: "get_location(unsigned int) const".
  for (const char* suffix : {" const", " volatile", " &&", " &"}) {
    while (full.ends_with(suffix)) full.erase(full.size() - std::char_traits<char>::length(suffix));
  }
  if (!full.ends_with(')')) return full;
  // The parameter list is the parenthesis matching the last one: "operator()(int)" keeps
  // "operator()", "f<(char)1>(int)" keeps its template arguments.
  int depth = 0;
  std::size_t open = std::string::npos;
  for (std::size_t i = full.size(); i-- > 0;) {
    if (full[i] == ')') ++depth;
    if (full[i] == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string::npos) return full;
  full.erase(open);
  // A function template's name starts with its return type ("R wi::min<A, B>"): the name is what
  // follows the last space outside brackets. Operators (whose names hold '<' and spaces) keep all.
  if (!full.ends_with('>') || full.find("operator") != std::string::npos) return full;
  depth = 0;
  std::size_t space = std::string::npos;
  for (std::size_t i = 0; i < full.size(); ++i) {
    if (full[i] == '<' || full[i] == '(') ++depth;
    if (full[i] == '>' || full[i] == ')') --depth;
    if (full[i] == ' ' && depth == 0) space = i;
  }
  return space == std::string::npos ? full : full.substr(space + 1);
}

}  // namespace userperf::report
