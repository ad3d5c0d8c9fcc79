#include <array>
#include <string_view>

#include "bpf/isa/program_image.hpp"

namespace userperf::bpf {

bool license_is_gpl_compatible(const std::string& license) {
  static constexpr std::array<std::string_view, 6> kCompatible = {
      "GPL", "GPL v2", "GPL and additional rights", "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL"};
  for (std::string_view name : kCompatible) {
    if (license == name) return true;
  }
  return false;
}

}  // namespace userperf::bpf
