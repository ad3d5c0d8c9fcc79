#include "verdict_classes.hpp"

#include <array>
#include <cctype>

namespace userperf::soundness {

std::string verdict_class(std::string_view reason) {
  std::string out;
  bool in_number = false;
  for (std::size_t i = 0; i < reason.size(); ++i) {
    const char c = reason[i];
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    // A number, hex or signed, is N; so is a register's index ("R3" -> "RN").
    if (digit || (in_number && (std::isxdigit(static_cast<unsigned char>(c)) || c == 'x'))) {
      if (!in_number) out += 'N';
      in_number = true;
      continue;
    }
    if (c == '-' && i + 1 < reason.size() &&
        std::isdigit(static_cast<unsigned char>(reason[i + 1]))) {
      continue;
    }
    in_number = false;
    out += c;
  }
  return out;
}

namespace {

struct Explained {
  std::string_view verdict_class;
  const char* reason;
};

// "userperf accepts, the kernel rejects", on purpose, each with why. None today: the one class
// the campaign found (a JSET's false branch, corpus 455) was a verifier difference, fixed.
constexpr std::array<Explained, 0> kExplained{};

}  // namespace

const char* explained_kernel_rejection(std::string_view verdict_class) {
  for (const Explained& e : kExplained) {
    if (verdict_class == e.verdict_class) return e.reason;
  }
  return nullptr;
}

}  // namespace userperf::soundness
