#include "bpf/isa/conformance_file.hpp"

#include <cctype>

#include "bpf/isa/encoding.hpp"

namespace userperf::bpf {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<std::uint64_t> parse_u64(std::string_view s, bool hex_only) {
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (hex_only) {
    base = 16;
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : s) {
    int digit = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                : (base == 16 && std::isxdigit(static_cast<unsigned char>(c)))
                    ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                    : -1;
    if (digit < 0) return std::nullopt;
    if (value > (UINT64_MAX - static_cast<unsigned>(digit)) / base) return std::nullopt;
    value = value * base + static_cast<unsigned>(digit);
  }
  return value;
}

enum class Section { kNone, kAsm, kRaw, kMem, kResult, kError, kNoRegisterOffset, kC };

}  // namespace

Expected<ConformanceFile> parse_conformance_file(std::string_view text) {
  ConformanceFile file;
  Section section = Section::kNone;
  std::string mem_text, result_text, error_text;
  int line_number = 0;
  std::size_t start = 0;
  auto fail = [&line_number](const std::string& message) {
    return make_error(EINVAL, "line " + std::to_string(line_number) + ": " + message);
  };
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    start = end + 1;
    ++line_number;
    if (line.starts_with("--")) {
      std::string_view name = trim(line.substr(2));
      if (name == "asm") {
        section = Section::kAsm;
        file.asm_first_line = line_number + 1;
      } else if (name == "raw") {
        section = Section::kRaw;
      } else if (name == "mem") {
        section = Section::kMem;
      } else if (name == "result") {
        section = Section::kResult;
      } else if (name == "error") {
        section = Section::kError;
      } else if (name == "no register offset") {
        section = Section::kNoRegisterOffset;
        file.no_register_offset = true;
      } else if (name == "c") {
        section = Section::kC;
      } else {
        return fail("unknown section '" + std::string(name) + "'");
      }
      continue;
    }
    switch (section) {
      case Section::kNone:
        break;  // the licence header
      case Section::kAsm:
        file.asm_text.append(line).push_back('\n');
        break;
      case Section::kRaw: {
        std::string_view word = trim(line);
        if (word.empty() || word.starts_with('#')) break;
        auto value = parse_u64(word, true);
        if (!value) return fail("invalid raw word '" + std::string(word) + "'");
        file.raw.push_back(*value);
        break;
      }
      case Section::kMem:
        mem_text.append(line).push_back('\n');
        break;
      case Section::kResult:
        result_text.append(line).push_back(' ');
        break;
      case Section::kError:
        error_text.append(line).push_back('\n');
        break;
      case Section::kNoRegisterOffset:
        file.required_features.append(trim(line)).push_back('\n');
        break;
      case Section::kC:
        file.c_source.append(line).push_back('\n');
        break;
    }
  }
  if (!mem_text.empty()) {
    auto bytes = parse_hex_bytes(mem_text);
    if (!bytes) return make_error(EINVAL, "mem section: " + bytes.error().message);
    file.memory = std::move(*bytes);
  }
  if (std::string_view value = trim(result_text); !value.empty()) {
    file.result = parse_u64(value, false);
    if (!file.result) return make_error(EINVAL, "invalid result '" + std::string(value) + "'");
  }
  if (std::string_view value = trim(error_text); !value.empty()) file.error = std::string(value);
  file.required_features = std::string(trim(file.required_features));
  return file;
}

}  // namespace userperf::bpf
