// The bpf_conformance `.data` test file format: sections introduced by `-- NAME` lines.
//   -- asm                 the program, in the assembler's syntax
//   -- raw                 (optional) its expected encoding, one 64-bit hex word per line
//   -- mem                 (optional) hex bytes of the memory passed in r1 (length in r2)
//   -- result              the expected r0 (0x-hex or decimal)
//   -- error               (optional) the expected error text
//   -- no register offset  the test does not rely on r1/r2; the rest lists required features
//   -- c                   the C source (informational)
// Lines before the first section (licence comments) are ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/expected.hpp"

namespace userperf::bpf {

struct ConformanceFile {
  std::string asm_text;
  int asm_first_line = 0;  // the file's line number of asm_text's first line
  std::vector<std::uint64_t> raw;
  std::vector<std::uint8_t> memory;
  std::optional<std::uint64_t> result;
  std::optional<std::string> error;
  bool no_register_offset = false;
  std::string required_features;  // the text under `-- no register offset`
  std::string c_source;
};

// EINVAL with "line N: ..." for an unknown section or a malformed mem/raw/result value.
Expected<ConformanceFile> parse_conformance_file(std::string_view text);

}  // namespace userperf::bpf
