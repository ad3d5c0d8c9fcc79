// The assembler and disassembler against the conformance suite's files, and their edge cases.
#include "bpf/isa/assembler.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bpf/isa/conformance_file.hpp"
#include "bpf/isa/disassembler.hpp"
#include "bpf/isa/encoding.hpp"
#include "bpf/isa/helper_names.hpp"

namespace userperf::bpf {
namespace {

const std::filesystem::path kSuiteDir = USERPERF_BPF_CONFORMANCE_DIR;

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool operator==(const Insn& a, const Insn& b) {
  return insn_to_word(a) == insn_to_word(b);
}

std::vector<Insn> assemble_ok(std::string_view text, const AssembleOptions& options = {}) {
  auto insns = assemble(text, options);
  EXPECT_TRUE(insns.ok()) << (insns.ok() ? "" : insns.error().message) << "\n" << text;
  return insns.ok() ? insns.value() : std::vector<Insn>{};
}

std::string assemble_error(std::string_view text) {
  auto insns = assemble(text);
  EXPECT_FALSE(insns.ok()) << text;
  return insns.ok() ? "" : insns.error().message;
}

TEST(Assembler, RoundTripsEveryConformanceFile) {
  int files = 0, with_raw = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kSuiteDir)) {
    if (entry.path().extension() != ".data") continue;
    SCOPED_TRACE(entry.path().filename().string());
    auto file = parse_conformance_file(read_text(entry.path()));
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto insns = assemble(file->asm_text, {.first_line = file->asm_first_line});
    ASSERT_TRUE(insns.ok()) << insns.error().message;
    ASSERT_FALSE(insns->empty());
    ++files;
    if (!file->raw.empty()) {
      ++with_raw;
      ASSERT_EQ(file->raw.size(), insns->size());
      for (std::size_t i = 0; i < insns->size(); ++i) {
        EXPECT_EQ(file->raw[i], insn_to_word((*insns)[i])) << "instruction " << i;
      }
    }
    std::string listing = disassemble(*insns);
    auto again = assemble_ok(listing);
    ASSERT_EQ(again.size(), insns->size()) << listing;
    for (std::size_t i = 0; i < again.size(); ++i) {
      EXPECT_TRUE(again[i] == (*insns)[i]) << "instruction " << i << "\n" << listing;
    }
  }
  EXPECT_EQ(files, 225);
  EXPECT_GE(with_raw, 1);
}

TEST(Assembler, EncodesTheSuiteSyntax) {
  auto insns = assemble_ok(R"(
    mov32 %r0, 1            # comment
    ldxh %r0, [%r1+2]
    stxdw [%r10-8], %r1
    lock xchg32 [%r10-8], %r1
    lock fetch add [%r10-8], %r1
    lock cmpxchg [%r10-8], %r1
    movsx832 %r0, %r1
    movsx3264 %r0, %r1
    ldxsb %r2, [%r1]
    sdiv32 %r0, -3
    be16 %r0
    bswap64 %r0
    call %r2
    callx %r3
  )");
  ASSERT_EQ(insns.size(), 14u);
  EXPECT_TRUE(insns[0] == make_insn(0xb4, 0, 0, 0, 1));
  EXPECT_TRUE(insns[1] == make_insn(0x69, 0, 1, 2, 0));
  EXPECT_TRUE(insns[2] == make_insn(0x7b, 10, 1, -8, 0));
  EXPECT_TRUE(insns[3] == make_insn(0xc3, 10, 1, -8, BPF_XCHG));
  EXPECT_TRUE(insns[4] == make_insn(0xdb, 10, 1, -8, BPF_ADD | BPF_FETCH));
  EXPECT_TRUE(insns[5] == make_insn(0xdb, 10, 1, -8, BPF_CMPXCHG));
  EXPECT_TRUE(insns[6] == make_insn(0xbc, 0, 1, 8, 0));
  EXPECT_TRUE(insns[7] == make_insn(0xbf, 0, 1, 32, 0));
  EXPECT_TRUE(insns[8] == make_insn(0x91, 2, 1, 0, 0));
  EXPECT_TRUE(insns[9] == make_insn(0x34, 0, 0, 1, -3));
  EXPECT_TRUE(insns[10] == make_insn(0xdc, 0, 0, 0, 16));
  EXPECT_TRUE(insns[11] == make_insn(0xd7, 0, 0, 0, 64));
  EXPECT_TRUE(insns[12] == make_insn(0x8d, 2, 0, 0, 0));
  EXPECT_TRUE(insns[13] == make_insn(0x8d, 3, 0, 0, 0));
}

TEST(Assembler, ResolvesLabelsJa32LocalCallsAndTheExitLabel) {
  auto insns = assemble_ok(R"(
    ja32 L2
  L1: exit
  L2:
    call local func
    jeq %r0, 0x10, exit
    ja L1
  func:
    mov %r0, 16
    exit
  )");
  ASSERT_EQ(insns.size(), 7u);
  EXPECT_EQ(insns[0].imm, 1);  // ja32 -> L2 (index 2)
  EXPECT_EQ(insns[2].src_reg, BPF_PSEUDO_CALL);
  EXPECT_EQ(insns[2].imm, 2);   // -> func (index 5)
  EXPECT_EQ(insns[3].off, -3);  // -> the first exit (index 1)
  EXPECT_EQ(insns[4].off, -4);  // -> L1
}

TEST(Assembler, ImmediatesInEveryForm) {
  auto insns = assemble_ok(
      "mov %r0, -1\nmov %r0, 0xffffffff\nmov %r0, 2147483647\nlddw %r1, 0x8000000000000000\n"
      "lddw %r2, -2\nlddw %r3, 18446744073709551615\nstb [%r1-0x10], 0x7f\n");
  ASSERT_EQ(insns.size(), 10u);
  EXPECT_EQ(insns[0].imm, -1);
  EXPECT_EQ(insns[1].imm, -1);
  EXPECT_EQ(insns[2].imm, 2147483647);
  EXPECT_EQ(insns[3].imm, 0);
  EXPECT_EQ(static_cast<std::uint32_t>(insns[4].imm), 0x80000000u);
  EXPECT_EQ(insns[5].imm, -2);
  EXPECT_EQ(insns[6].imm, -1);
  EXPECT_EQ(insns[9].off, -16);
  EXPECT_EQ(insns[9].imm, 0x7f);
}

TEST(Assembler, MapReferencesAndHelperNames) {
  AssembleOptions options;
  options.map_index = [](std::string_view name) -> std::optional<std::uint32_t> {
    if (name == "counts") return 3;
    if (name == ".rodata") return 4;
    return std::nullopt;
  };
  auto insns = assemble_ok(
      "lddw %r1, map:counts\nlddw %r2, map_value:.rodata+16\ncall bpf_map_lookup_elem\n"
      "call perf_event_output\nexit\n",
      options);
  ASSERT_EQ(insns.size(), 7u);
  EXPECT_TRUE(insns[0] == make_insn(0x18, 1, BPF_PSEUDO_MAP_IDX, 0, 3));
  EXPECT_EQ(insns[1].imm, 0);
  EXPECT_TRUE(insns[2] == make_insn(0x18, 2, BPF_PSEUDO_MAP_IDX_VALUE, 0, 4));
  EXPECT_EQ(insns[3].imm, 16);
  EXPECT_EQ(insns[4].imm, BPF_FUNC_map_lookup_elem);
  EXPECT_EQ(insns[5].imm, BPF_FUNC_perf_event_output);

  const std::vector<std::string> names = {"a", "b", "c", "counts", ".rodata"};
  std::string listing = disassemble(insns, {.helper_names = true, .map_names = names});
  EXPECT_NE(listing.find("lddw %r1, map:counts"), std::string::npos) << listing;
  EXPECT_NE(listing.find("map_value:.rodata+16"), std::string::npos) << listing;
  EXPECT_NE(listing.find("call bpf_map_lookup_elem"), std::string::npos) << listing;
  auto again = assemble_ok(listing, options);
  ASSERT_EQ(again.size(), insns.size());
  for (std::size_t i = 0; i < insns.size(); ++i) EXPECT_TRUE(again[i] == insns[i]) << i;

  auto unknown = assemble("mov %r0, 0\nlddw %r1, map:nope\n", options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "line 2: unknown map 'nope'");
  EXPECT_EQ(helper_id("bpf_ktime_get_ns"), BPF_FUNC_ktime_get_ns);
  EXPECT_STREQ(helper_name(BPF_FUNC_get_smp_processor_id), "bpf_get_smp_processor_id");
}

TEST(Assembler, ErrorsNameTheLine) {
  EXPECT_EQ(assemble_error("mov %r0, 1\nfrob %r0\n"), "line 2: unknown mnemonic 'frob'");
  EXPECT_EQ(assemble_error("mov %r11, 1"), "line 1: invalid register '%r11'");
  EXPECT_EQ(assemble_error("exit\nja nowhere"), "line 2: undefined label 'nowhere'");
  EXPECT_EQ(assemble_error("mov32 %r0, 0x100000000"),
            "line 1: immediate out of 32-bit range: 0x100000000");
  EXPECT_EQ(assemble_error("ldxb %r0, [%r1+70000]"), "line 1: offset out of 16-bit range: +70000");
  EXPECT_EQ(assemble_error("L: exit\nL: exit"), "line 2: duplicate label 'L'");
  EXPECT_EQ(assemble_error("add %r0"), "line 1: add takes 2 operands, got 1");
  EXPECT_EQ(assemble_error("call nosuchhelper"), "line 1: unknown helper 'nosuchhelper'");
  EXPECT_EQ(assemble_error("lock nand [%r1], %r2"), "line 1: unknown atomic operation 'nand'");
}

// Every valid single-slot encoding (and random invalid ones as raw) survives the round trip.
TEST(Disassembler, RoundTripsEveryOpcode) {
  std::vector<Insn> insns;
  for (int code = 0; code < 256; ++code) {
    for (std::int16_t off : {0, 1, 8, 16, 32, -5}) {
      for (std::int32_t imm : {0, 1, 16, 32, 64, -7, BPF_XCHG, BPF_CMPXCHG, BPF_OR | BPF_FETCH}) {
        for (std::uint8_t src : {0, 1, 2, 7}) {
          Insn insn = make_insn(static_cast<std::uint8_t>(code), 3, src, off, imm);
          if (is_lddw(insn)) continue;
          insns.push_back(insn);
        }
      }
    }
  }
  insns.push_back(make_insn(0x18, 1, 0, 0, 5));  // a lddw pair last
  insns.push_back(make_insn(0, 0, 0, 0, -1));
  std::string listing = disassemble(insns);
  auto again = assemble_ok(listing);
  ASSERT_EQ(again.size(), insns.size());
  for (std::size_t i = 0; i < insns.size(); ++i) {
    ASSERT_TRUE(again[i] == insns[i]) << i << ": " << disassemble_insn(insns, i);
  }
}

// The disassembler writes values with the one hex formatter (support/hex.hpp).
TEST(Encoding, DisassemblerWritesHex) {
  const std::vector<Insn> lddw = {make_insn(0x18, 1, 0, 0, 0x2a), make_insn(0, 0, 0, 0, 1)};
  EXPECT_EQ(disassemble_insn(lddw, 0), "lddw %r1, 0x10000002a");
}

TEST(ConformanceFile, ParsesEverySection) {
  auto file = parse_conformance_file(
      "# licence\n-- asm\nmov %r0, 1\nexit\n-- mem\n00 01\nff\n-- raw\n0x00000001000000b7\n"
      "-- result\n0x10\n-- no register offset\ncall instruction\n-- c\nint x;\n");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->asm_text, "mov %r0, 1\nexit\n");
  EXPECT_EQ(file->asm_first_line, 3);
  EXPECT_EQ(file->memory, (std::vector<std::uint8_t>{0, 1, 0xff}));
  EXPECT_EQ(file->raw, (std::vector<std::uint64_t>{0xb7 | (1ull << 32)}));
  EXPECT_EQ(file->result, 0x10u);
  EXPECT_TRUE(file->no_register_offset);
  EXPECT_EQ(file->required_features, "call instruction");
  EXPECT_EQ(file->c_source, "int x;\n");
  EXPECT_FALSE(file->error.has_value());

  auto with_error = parse_conformance_file("-- asm\nexit\n-- error\n  bad thing  \n");
  ASSERT_TRUE(with_error.ok());
  EXPECT_EQ(with_error->error, "bad thing");
  EXPECT_FALSE(parse_conformance_file("-- asm\nexit\n-- bogus\n").ok());
  EXPECT_FALSE(parse_conformance_file("-- mem\n0g\n").ok());
}

}  // namespace
}  // namespace userperf::bpf
