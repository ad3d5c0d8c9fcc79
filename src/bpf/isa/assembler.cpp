#include "bpf/isa/assembler.hpp"

#include <cctype>
#include <limits>
#include <map>
#include <string>

#include "bpf/isa/encoding.hpp"
#include "bpf/isa/helper_names.hpp"
#include "bpf/isa/mnemonics.hpp"

namespace userperf::bpf {

namespace {

struct SyntaxError {
  std::string message;
};

[[noreturn]] void fail(std::string message) {
  throw SyntaxError{std::move(message)};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits off the first white-space-delimited word.
std::string_view next_word(std::string_view& s) {
  s = trim(s);
  std::size_t end = 0;
  while (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
  std::string_view word = s.substr(0, end);
  s = trim(s.substr(end));
  return word;
}

std::vector<std::string_view> split_operands(std::string_view s) {
  std::vector<std::string_view> operands;
  s = trim(s);
  if (s.empty()) return operands;
  while (true) {
    std::size_t comma = s.find(',');
    operands.push_back(trim(s.substr(0, comma)));
    if (operands.back().empty()) fail("empty operand");
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  return operands;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '$') {
      return false;
    }
  }
  return true;
}

// A decimal or 0x-hex number with an optional sign, as sign and magnitude.
struct Number {
  bool negative = false;
  std::uint64_t magnitude = 0;
};

std::optional<Number> parse_number(std::string_view s) {
  Number n;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    n.negative = s[0] == '-';
    s.remove_prefix(1);
  }
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return std::nullopt;
  for (char c : s) {
    unsigned digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (base == 16 && std::isxdigit(static_cast<unsigned char>(c))) {
      digit = static_cast<unsigned>(std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
    } else {
      return std::nullopt;
    }
    if (n.magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / base) {
      return std::nullopt;  // overflows 64 bits
    }
    n.magnitude = n.magnitude * base + digit;
  }
  return n;
}

Number number_or_fail(std::string_view s, const char* what) {
  auto n = parse_number(s);
  if (!n) fail(std::string("invalid ") + what + " '" + std::string(s) + "'");
  return *n;
}

// imm fields take [INT32_MIN, UINT32_MAX]: negative decimals and unsigned hex alike.
std::int32_t imm32(std::string_view s) {
  Number n = number_or_fail(s, "immediate");
  if (n.negative ? n.magnitude > 0x80000000ull : n.magnitude > 0xffffffffull) {
    fail("immediate out of 32-bit range: " + std::string(s));
  }
  std::uint32_t bits = static_cast<std::uint32_t>(n.negative ? 0 - n.magnitude : n.magnitude);
  return static_cast<std::int32_t>(bits);
}

std::int16_t off16(std::string_view s) {
  Number n = number_or_fail(s, "offset");
  if (n.negative ? n.magnitude > 0x8000 : n.magnitude > 0xffff) {
    fail("offset out of 16-bit range: " + std::string(s));
  }
  std::uint16_t bits = static_cast<std::uint16_t>(n.negative ? 0 - n.magnitude : n.magnitude);
  return static_cast<std::int16_t>(bits);
}

std::uint64_t imm64(std::string_view s) {
  Number n = number_or_fail(s, "immediate");
  if (n.negative && n.magnitude > 0x8000000000000000ull) {
    fail("immediate out of 64-bit range: " + std::string(s));
  }
  return n.negative ? 0 - n.magnitude : n.magnitude;
}

std::uint8_t reg(std::string_view s) {
  std::string_view name = s;
  if (name.starts_with('%')) name.remove_prefix(1);
  if (name.size() >= 2 && name[0] == 'r') {
    name.remove_prefix(1);
    unsigned value = 0;
    bool digits = !name.empty() && name.size() <= 2;
    for (char c : name) {
      if (!std::isdigit(static_cast<unsigned char>(c))) digits = false;
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (digits && value < kNumRegs) return static_cast<std::uint8_t>(value);
  }
  fail("invalid register '" + std::string(s) + "'");
}

bool is_reg(std::string_view s) {
  return s.starts_with('%');
}

// [%rN], [%rN+OFF], [%rN-OFF]
std::pair<std::uint8_t, std::int16_t> memory_operand(std::string_view s) {
  if (!s.starts_with('[') || !s.ends_with(']'))
    fail("invalid memory operand '" + std::string(s) + "'");
  std::string_view inner = trim(s.substr(1, s.size() - 2));
  std::size_t sign = inner.find_first_of("+-");
  if (sign == std::string_view::npos) return {reg(inner), 0};
  std::string off(1, inner[sign]);
  off += trim(inner.substr(sign + 1));
  return {reg(trim(inner.substr(0, sign))), off16(off)};
}

std::optional<std::uint8_t> size_code(std::string_view suffix) {
  for (std::size_t i = 0; i < mnemonics::kSizes.size(); ++i) {
    if (suffix == mnemonics::kSizes[i]) return static_cast<std::uint8_t>(i << 3);
  }
  return std::nullopt;
}

template <std::size_t N>
std::optional<std::uint8_t> op_code(const std::array<std::string_view, N>& names,
                                    std::string_view name) {
  if (name.empty()) return std::nullopt;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<std::uint8_t>(i << 4);
  }
  return std::nullopt;
}

class Assembler {
 public:
  explicit Assembler(const AssembleOptions& options) : options_(options) {}

  Expected<std::vector<Insn>> run(std::string_view text) {
    int line_number = options_.first_line;
    try {
      std::size_t start = 0;
      while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        line_ = line_number;
        line(text.substr(start, end - start));
        start = end + 1;
        ++line_number;
      }
      resolve();
    } catch (const SyntaxError& error) {
      return make_error(EINVAL, "line " + std::to_string(line_) + ": " + error.message);
    }
    return std::move(out_);
  }

 private:
  enum class Field { kOff, kImm };
  struct Fixup {
    std::size_t index;
    std::string label;
    Field field;
    int line;
  };

  void line(std::string_view text) {
    std::size_t comment = text.find('#');
    if (comment != std::string_view::npos) text = text.substr(0, comment);
    text = trim(text);
    // Labels: `name:` before an optional instruction.
    while (!text.empty()) {
      std::string_view rest = text;
      std::string_view word = next_word(rest);
      if (!word.ends_with(':')) break;
      std::string label(word.substr(0, word.size() - 1));
      if (!is_identifier(label)) fail("invalid label '" + label + "'");
      if (!labels_.emplace(label, out_.size()).second) fail("duplicate label '" + label + "'");
      text = rest;
    }
    if (text.empty()) return;
    std::string_view rest = text;
    std::string mnemonic(next_word(rest));
    instruction(mnemonic, rest);
  }

  void expect(const std::vector<std::string_view>& operands, std::size_t count,
              const std::string& mnemonic) {
    if (operands.size() != count) {
      fail(mnemonic + " takes " + std::to_string(count) + " operand" + (count == 1 ? "" : "s") +
           ", got " + std::to_string(operands.size()));
    }
  }

  void emit(std::uint8_t code, std::uint8_t dst, std::uint8_t src, std::int16_t off,
            std::int32_t imm) {
    out_.push_back(make_insn(code, dst, src, off, imm));
  }

  // A label or a relative offset into `field` of the instruction about to be emitted.
  std::int32_t target(std::string_view s, Field field) {
    if (s.starts_with('+') || s.starts_with('-')) {
      return field == Field::kOff ? off16(s) : imm32(s);
    }
    if (!is_identifier(s)) fail("invalid jump target '" + std::string(s) + "'");
    fixups_.push_back({out_.size(), std::string(s), field, line_});
    return 0;
  }

  void instruction(const std::string& m, std::string_view rest) {
    if (m == "lock") return atomic(rest);
    if (m == "call") return call(rest);
    if (m == "callx") {  // an alias of `call %rN`
      auto operands = split_operands(rest);
      expect(operands, 1, m);
      return emit(BPF_JMP | BPF_CALL | BPF_X, reg(operands[0]), 0, 0, 0);
    }
    auto operands = split_operands(rest);
    if (m == "exit") {
      expect(operands, 0, m);
      if (!first_exit_) first_exit_ = out_.size();
      return emit(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    }
    if (m == "ja") {
      expect(operands, 1, m);
      return emit(BPF_JMP | BPF_JA, 0, 0,
                  static_cast<std::int16_t>(target(operands[0], Field::kOff)), 0);
    }
    if (m == "ja32" || m == "gotol") {
      expect(operands, 1, m);
      return emit(BPF_JMP32 | BPF_JA, 0, 0, 0, target(operands[0], Field::kImm));
    }
    if (m == "lddw") return lddw(operands);
    if (m == "raw") {
      expect(operands, 1, m);
      out_.push_back(insn_from_word(imm64(operands[0])));
      return;
    }
    if (memory(m, operands)) return;
    if (jump(m, operands)) return;
    if (alu(m, operands)) return;
    fail("unknown mnemonic '" + m + "'");
  }

  bool jump(const std::string& m, const std::vector<std::string_view>& operands) {
    std::string_view name = m;
    std::uint8_t cls = BPF_JMP;
    if (name.ends_with("32")) {
      cls = BPF_JMP32;
      name.remove_suffix(2);
    }
    auto op = op_code(mnemonics::kJmpOps, name);
    if (!op) return false;
    expect(operands, 3, m);
    std::uint8_t dst = reg(operands[0]);
    std::int32_t imm = 0;
    std::uint8_t src = 0;
    std::uint8_t source = BPF_K;
    if (is_reg(operands[1])) {
      src = reg(operands[1]);
      source = BPF_X;
    } else {
      imm = imm32(operands[1]);
    }
    auto off = static_cast<std::int16_t>(target(operands[2], Field::kOff));
    emit(cls | *op | source, dst, src, off, imm);
    return true;
  }

  bool alu(const std::string& m, const std::vector<std::string_view>& operands) {
    std::string_view name = m;
    // Byte swaps: le16/be32 (ALU class), bswap64 / swap64 (ALU64).
    for (auto [prefix, code] :
         {std::pair<std::string_view, std::uint8_t>{"le", BPF_ALU | BPF_END | BPF_TO_LE},
          {"be", BPF_ALU | BPF_END | BPF_TO_BE},
          {"bswap", BPF_ALU64 | BPF_END},
          {"swap", BPF_ALU64 | BPF_END}}) {
      if (!name.starts_with(prefix)) continue;
      std::string_view width = name.substr(prefix.size());
      if (width != "16" && width != "32" && width != "64") continue;
      expect(operands, 1, m);
      emit(code, reg(operands[0]), 0, 0, width == "16" ? 16 : width == "32" ? 32 : 64);
      return true;
    }
    std::uint8_t cls = BPF_ALU64;
    if (name.ends_with("32")) {
      cls = BPF_ALU;
      name.remove_suffix(2);
    } else if (name.ends_with("64")) {
      name.remove_suffix(2);
    }
    if (name.starts_with("movsx")) {  // movsx<width><class>: movsx832, movsx1664, ...
      std::string_view width = name.substr(5);
      std::int16_t off = width == "8" ? 8 : width == "16" ? 16 : width == "32" ? 32 : 0;
      if (off == 0 || (off == 32 && cls == BPF_ALU)) return false;
      expect(operands, 2, m);
      emit(cls | BPF_MOV | BPF_X, reg(operands[0]), reg(operands[1]), off, 0);
      return true;
    }
    std::int16_t off = 0;
    if (name == "sdiv" || name == "smod") {
      off = 1;
      name.remove_prefix(1);
    }
    auto op = op_code(mnemonics::kAluOps, name);
    if (!op) return false;
    if (*op == BPF_NEG) {
      expect(operands, 1, m);
      emit(cls | BPF_NEG, reg(operands[0]), 0, 0, 0);
      return true;
    }
    expect(operands, 2, m);
    if (is_reg(operands[1])) {
      emit(cls | *op | BPF_X, reg(operands[0]), reg(operands[1]), off, 0);
    } else {
      emit(cls | *op | BPF_K, reg(operands[0]), 0, off, imm32(operands[1]));
    }
    return true;
  }

  bool memory(const std::string& m, const std::vector<std::string_view>& operands) {
    std::string_view name = m;
    if (name.starts_with("ldabs") || name.starts_with("ldind")) {
      bool ind = name.starts_with("ldind");
      auto size = size_code(name.substr(5));
      if (!size || *size == BPF_DW) return false;
      expect(operands, ind ? 2 : 1, m);
      std::uint8_t src = ind ? reg(operands[0]) : 0;
      emit(BPF_LD | (ind ? BPF_IND : BPF_ABS) | *size, 0, src, 0, imm32(operands[ind ? 1 : 0]));
      return true;
    }
    if (name.starts_with("ldx")) {
      std::uint8_t mode = BPF_MEM;
      auto size = size_code(name.substr(3));
      if (!size && name.size() > 4 && name[3] == 's') {
        mode = kModeMemsx;
        size = size_code(name.substr(4));
        if (size == BPF_DW) return false;
      }
      if (!size) return false;
      expect(operands, 2, m);
      auto [src, off] = memory_operand(operands[1]);
      emit(BPF_LDX | mode | *size, reg(operands[0]), src, off, 0);
      return true;
    }
    if (name.starts_with("stx")) {
      auto size = size_code(name.substr(3));
      if (!size) return false;
      expect(operands, 2, m);
      auto [dst, off] = memory_operand(operands[0]);
      emit(BPF_STX | BPF_MEM | *size, dst, reg(operands[1]), off, 0);
      return true;
    }
    if (name.starts_with("st")) {
      auto size = size_code(name.substr(2));
      if (!size) return false;
      expect(operands, 2, m);
      auto [dst, off] = memory_operand(operands[0]);
      emit(BPF_ST | BPF_MEM | *size, dst, 0, off, imm32(operands[1]));
      return true;
    }
    return false;
  }

  // lock [fetch] OP[32] [%rD+OFF], %rS
  void atomic(std::string_view rest) {
    std::string_view word = next_word(rest);
    bool fetch = word == "fetch";
    if (fetch) word = next_word(rest);
    std::uint8_t size = BPF_DW;
    if (word.ends_with("32")) {
      size = BPF_W;
      word.remove_suffix(2);
    } else if (word.ends_with("64")) {
      word.remove_suffix(2);
    }
    std::int32_t imm;
    if (word == "add") {
      imm = BPF_ADD;
    } else if (word == "or") {
      imm = BPF_OR;
    } else if (word == "and") {
      imm = BPF_AND;
    } else if (word == "xor") {
      imm = BPF_XOR;
    } else if (word == "xchg" || word == "cmpxchg") {
      imm = word == "xchg" ? BPF_XCHG : BPF_CMPXCHG;  // fetch is implied
      fetch = false;
    } else {
      fail("unknown atomic operation '" + std::string(word) + "'");
    }
    if (fetch) imm |= BPF_FETCH;
    auto operands = split_operands(rest);
    expect(operands, 2, "lock " + std::string(word));
    auto [dst, off] = memory_operand(operands[0]);
    emit(BPF_STX | BPF_ATOMIC | size, dst, reg(operands[1]), off, imm);
  }

  // call N | call NAME | call %rN | call local TARGET | call helper X | call kfunc N
  void call(std::string_view rest) {
    std::string_view first = next_word(rest);
    std::string_view operand = first;
    if (first == "local" || first == "helper" || first == "kfunc" || first == "runtime") {
      operand = next_word(rest);
    }
    if (operand.empty() || !rest.empty()) fail("call takes one target");
    if (first == "local") {
      return emit(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, target(operand, Field::kImm));
    }
    if (first == "kfunc" || first == "runtime") {
      return emit(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, imm32(operand));
    }
    if (is_reg(operand)) return emit(BPF_JMP | BPF_CALL | BPF_X, reg(operand), 0, 0, 0);
    if (parse_number(operand)) return emit(BPF_JMP | BPF_CALL, 0, 0, 0, imm32(operand));
    auto id = helper_id(operand);
    if (!id) fail("unknown helper '" + std::string(operand) + "'");
    emit(BPF_JMP | BPF_CALL, 0, 0, 0, *id);
  }

  // lddw %rN, IMM64 | lddw %rN, KIND:ARG[+OFF]
  void lddw(const std::vector<std::string_view>& operands) {
    expect(operands, 2, "lddw");
    std::uint8_t dst = reg(operands[0]);
    std::string_view value = operands[1];
    std::size_t colon = value.find(':');
    if (colon == std::string_view::npos) {
      std::uint64_t imm = imm64(value);
      emit(BPF_LD | BPF_IMM | BPF_DW, dst, 0, 0, static_cast<std::int32_t>(imm & 0xffffffff));
      emit(0, 0, 0, 0, static_cast<std::int32_t>(imm >> 32));
      return;
    }
    std::string_view kind = value.substr(0, colon);
    std::uint8_t src = 0;
    for (std::size_t i = 1; i < mnemonics::kLddwKinds.size(); ++i) {
      if (kind == mnemonics::kLddwKinds[i]) src = static_cast<std::uint8_t>(i);
    }
    if (src == 0) fail("unknown lddw source '" + std::string(kind) + "'");
    std::string_view arg = trim(value.substr(colon + 1));
    // ARG (may start with a sign), then an optional +OFF / -OFF.
    std::size_t split = arg.find_first_of("+-", arg.empty() ? 0 : 1);
    std::string_view off_text = split == std::string_view::npos ? "" : arg.substr(split);
    arg = trim(arg.substr(0, split));
    std::int32_t imm;
    if ((src == BPF_PSEUDO_MAP_IDX || src == BPF_PSEUDO_MAP_IDX_VALUE) && is_identifier(arg)) {
      std::optional<std::uint32_t> index;
      if (options_.map_index) index = options_.map_index(arg);
      if (!index) fail("unknown map '" + std::string(arg) + "'");
      imm = static_cast<std::int32_t>(*index);
    } else {
      imm = imm32(arg);
    }
    std::int32_t next_imm = 0;
    if (!off_text.empty()) {
      std::string off(1, off_text[0]);
      off += trim(off_text.substr(1));
      next_imm = imm32(off);
    }
    emit(BPF_LD | BPF_IMM | BPF_DW, dst, src, 0, imm);
    emit(0, 0, 0, 0, next_imm);
  }

  void resolve() {
    for (const Fixup& fixup : fixups_) {
      line_ = fixup.line;
      auto it = labels_.find(fixup.label);
      std::size_t where;
      if (it != labels_.end()) {
        where = it->second;
      } else if (fixup.label == "exit" && first_exit_) {
        where = *first_exit_;
      } else {
        fail("undefined label '" + fixup.label + "'");
      }
      std::int64_t rel =
          static_cast<std::int64_t>(where) - static_cast<std::int64_t>(fixup.index) - 1;
      Insn& insn = out_[fixup.index];
      if (fixup.field == Field::kOff) {
        if (rel < std::numeric_limits<std::int16_t>::min() ||
            rel > std::numeric_limits<std::int16_t>::max()) {
          fail("jump to '" + fixup.label + "' out of 16-bit range");
        }
        insn.off = static_cast<std::int16_t>(rel);
      } else {
        insn.imm = static_cast<std::int32_t>(rel);
      }
    }
  }

  const AssembleOptions& options_;
  std::vector<Insn> out_;
  std::map<std::string, std::size_t, std::less<>> labels_;
  std::vector<Fixup> fixups_;
  std::optional<std::size_t> first_exit_;
  int line_ = 0;
};

}  // namespace

Expected<std::vector<Insn>> assemble(std::string_view text, const AssembleOptions& options) {
  Assembler assembler(options);
  return assembler.run(text);
}

}  // namespace userperf::bpf
