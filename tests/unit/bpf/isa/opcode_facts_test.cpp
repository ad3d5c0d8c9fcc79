// Opcode validity and bpf_conformance's version/group labels.
#include "bpf/isa/opcode_facts.hpp"

#include <gtest/gtest.h>

#include "bpf/isa/assembler.hpp"

namespace userperf::bpf {
namespace {

ConformanceInfo info_of(std::string_view text) {
  auto insns = assemble(text);
  EXPECT_TRUE(insns.ok()) << text;
  return insns.ok() ? program_conformance(*insns) : ConformanceInfo{};
}

TEST(OpcodeFacts, VersionsAndGroupsAsTheRunnerLabelsThem) {
  struct Case {
    const char* text;
    CpuVersion version;
    std::uint32_t groups;
  };
  const Case cases[] = {
      {"mov32 %r0, 1", CpuVersion::kV1, kGroupBase32},
      {"mov %r0, 1", CpuVersion::kV1, kGroupBase64},
      {"jlt %r0, 1, +0", CpuVersion::kV2, kGroupBase64},
      {"jeq32 %r0, 1, +0", CpuVersion::kV3, kGroupBase32},
      {"ja32 +0", CpuVersion::kV4, kGroupBase32},
      {"lock add [%r10-8], %r1", CpuVersion::kV3, kGroupAtomic64},
      {"lock fetch xor32 [%r10-8], %r1", CpuVersion::kV3, kGroupAtomic32},
      {"div32 %r0, 3", CpuVersion::kV1, kGroupDivmul32},
      {"sdiv %r0, 3", CpuVersion::kV4, kGroupDivmul64},
      {"movsx1664 %r0, %r1", CpuVersion::kV4, kGroupBase64},
      {"ldxsh %r0, [%r1]", CpuVersion::kV4, kGroupBase32},
      {"le64 %r0", CpuVersion::kV1, kGroupBase64},
      {"be16 %r0", CpuVersion::kV1, kGroupBase32},
      {"bswap64 %r0", CpuVersion::kV4, kGroupBase32},  // the runner ignores bswap's imm
      {"call %r2", CpuVersion::kV1, kGroupCallx},
      {"call local +0", CpuVersion::kV3, kGroupBase32},
      {"ldabsw 4", CpuVersion::kV1, kGroupPacket},
      {"lddw %r0, 5\nexit", CpuVersion::kV1, kGroupBase64 | kGroupBase32},
  };
  for (const Case& c : cases) {
    ConformanceInfo info = info_of(c.text);
    EXPECT_EQ(info.cpu_version, c.version) << c.text;
    EXPECT_EQ(info.groups, c.groups) << c.text << ": " << group_names(info.groups);
  }
}

TEST(OpcodeFacts, ValidityChecksReservedFields) {
  EXPECT_TRUE(insn_valid(make_insn(0xb7, 1, 0, 0, 5)));
  EXPECT_FALSE(insn_valid(make_insn(0xb7, 1, 2, 0, 5)));   // src with K
  EXPECT_FALSE(insn_valid(make_insn(0xbf, 1, 2, 0, 5)));   // imm with X
  EXPECT_FALSE(insn_valid(make_insn(0xbc, 1, 2, 32, 0)));  // movsx32 in ALU32
  EXPECT_TRUE(insn_valid(make_insn(0xbf, 1, 2, 32, 0)));
  EXPECT_FALSE(insn_valid(make_insn(0x8c, 1, 2, 0, 0)));     // neg with X
  EXPECT_FALSE(insn_valid(make_insn(0xdf, 1, 0, 0, 16)));    // bswap with X
  EXPECT_FALSE(insn_valid(make_insn(0xd4, 1, 0, 0, 8)));     // le8
  EXPECT_FALSE(insn_valid(make_insn(0x99, 1, 2, 0, 0)));     // ldxsdw
  EXPECT_FALSE(insn_valid(make_insn(0xc3, 1, 2, 0, 0x02)));  // unknown atomic op
  EXPECT_FALSE(insn_valid(make_insn(0x95, 0, 0, 0, 1)));     // exit with imm
  EXPECT_FALSE(insn_valid(make_insn(0x86, 0, 0, 0, 1)));     // call in JMP32
  EXPECT_FALSE(insn_valid(make_insn(0x07, 11, 0, 0, 1)));    // r11
  EXPECT_FALSE(insn_valid(make_insn(0x18, 0, 7, 0, 1)));     // lddw src 7
  EXPECT_FALSE(insn_valid(make_insn(0x00, 0, 0, 0, 0)));
  EXPECT_FALSE(insn_valid(make_insn(0x34, 0, 0, 2, 1)));  // div off 2
  EXPECT_EQ(parse_cpu_version("v3"), CpuVersion::kV3);
  EXPECT_EQ(parse_group("divmul64"), kGroupDivmul64);
  EXPECT_EQ(group_names(kGroupBase32 | kGroupCallx), "base32,callx");
}

}  // namespace
}  // namespace userperf::bpf
