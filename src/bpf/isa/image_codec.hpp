// An ObjectImage as bytes: what a loader produced, carried to where it runs without the loader.
// `userperf record --bpf` loads the object once, in the recorder (libbpf and libelf there), and
// every recorded process reads this instead of the ELF file, so the agent preloaded into each
// links neither. Decoding checks every count and length against the bytes it has (a reader never
// trusts a producer): a bad image is an Error, never an overread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bpf/isa/program_image.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

std::vector<std::uint8_t> encode_object_image(const ObjectImage& image);
Expected<ObjectImage> decode_object_image(std::span<const std::uint8_t> bytes);

}  // namespace userperf::bpf
