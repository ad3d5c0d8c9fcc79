#include "bpf/isa/encoding.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace userperf::bpf {

std::uint64_t insn_to_word(const Insn& insn) {
  std::uint64_t word = 0;
  static_assert(sizeof(Insn) == sizeof(word));
  std::memcpy(&word, &insn, sizeof(word));  // x86-64 and arm64 hosts are little-endian
  return word;
}

Insn insn_from_word(std::uint64_t word) {
  Insn insn{};
  std::memcpy(&insn, &word, sizeof(insn));
  return insn;
}

std::vector<std::uint8_t> insns_to_bytes(std::span<const Insn> insns) {
  std::vector<std::uint8_t> bytes(insns.size() * sizeof(Insn));
  if (!insns.empty()) std::memcpy(bytes.data(), insns.data(), bytes.size());
  return bytes;
}

Expected<std::vector<Insn>> insns_from_bytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() % sizeof(Insn) != 0) {
    return make_error(
        EINVAL, "program size " + std::to_string(bytes.size()) + " is not a multiple of 8 bytes");
  }
  std::vector<Insn> insns(bytes.size() / sizeof(Insn));
  if (!insns.empty()) std::memcpy(insns.data(), bytes.data(), bytes.size());
  return insns;
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Expected<std::vector<std::uint8_t>> parse_hex_bytes(std::string_view text) {
  std::vector<std::uint8_t> bytes;
  int high = -1;  // the pending first digit of a pair
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (high >= 0)
        return make_error(EINVAL, "odd number of hex digits before offset " + std::to_string(i));
      continue;
    }
    int digit = hex_digit(c);
    if (digit < 0) {
      return make_error(
          EINVAL, std::string("invalid hex character '") + c + "' at offset " + std::to_string(i));
    }
    if (high < 0) {
      high = digit;
    } else {
      bytes.push_back(static_cast<std::uint8_t>(high << 4 | digit));
      high = -1;
    }
  }
  if (high >= 0) return make_error(EINVAL, "odd number of hex digits at the end");
  return bytes;
}

std::string format_hex_bytes(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 3);
  for (std::uint8_t byte : bytes) {
    if (!text.empty()) text += ' ';
    text += kDigits[byte >> 4];
    text += kDigits[byte & 0xf];
  }
  return text;
}

}  // namespace userperf::bpf
