// Structural checks of a .BTF section before libbpf parses it. libbpf 1.1 trusts name offsets,
// type ids and modifier chains (a typedef cycle makes it loop forever), so hostile BTF is refused
// here with the kernel's own rules for those properties.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "support/expected.hpp"

namespace userperf::bpf::loader {

// Header inside the section, type and string areas inside the data, strings NUL-terminated,
// every type a known kind whose trailing records fit, every name offset inside the strings, every
// referenced type id defined, DATASEC entries naming VARs (or FUNCs), no modifier/pointer cycles.
std::optional<Error> check_btf(std::span<const std::uint8_t> section);

}  // namespace userperf::bpf::loader
