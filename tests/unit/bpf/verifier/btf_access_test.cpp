// Loads through BTF pointers (verifier/btf_access.cpp) against a made-up kernel type table, for
// the walk's rules the corpus (432-443, the real kernel's types) does not reach: bitfields, a
// union's untrusted pointers, holes, nested structs, arrays, opaque structs, the probe marking.
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <vector>

#include "bpf/isa/assembler.hpp"
#include "verifier_test_support.hpp"

namespace userperf::bpf {
namespace {

using namespace verifier_test;
using Kind = KernelBtfType::Kind;

KernelBtfType scalar(std::uint32_t size) {
  KernelBtfType t;
  t.kind = Kind::kScalar;
  t.name = "int";
  t.size = size;
  return t;
}

// [1] task_struct (48 bytes): int pid @0; bitfield flags:3 @32 bits; hole 8..16;
//     struct inner @16 { long a @0; struct task_struct *next @8 }; union u @32 { task_struct *p;
//     long l; }; char name[8] @40
// [2] int (4)  [3] long (8)  [4] ptr -> task_struct  [5] inner  [6] union  [7] char  [8] char[8]
// [9] opaque struct far (no members)  [10] ptr -> far  (inner's member b at 0 overlays a: no)
KernelBtfTypes types() {
  KernelBtfTypes bt;
  bt.types.resize(12);
  KernelBtfType& task = bt.types[1];
  task.kind = Kind::kStruct;
  task.name = "task_struct";
  task.size = 48;
  task.members = {{"pid", 2, 0, 0},
                  {"flags", 2, 32, 3},
                  {"inner", 5, 128, 0},
                  {"u", 6, 256, 0},
                  {"name", 8, 320, 0}};
  bt.types[2] = scalar(4);
  bt.types[3] = scalar(8);
  bt.types[4].kind = Kind::kPtr;
  bt.types[4].size = 8;
  bt.types[4].target = 1;
  KernelBtfType& inner = bt.types[5];
  inner.kind = Kind::kStruct;
  inner.name = "inner";
  inner.size = 16;
  inner.members = {{"a", 3, 0, 0}, {"far", 10, 64, 0}};
  KernelBtfType& u = bt.types[6];
  u.kind = Kind::kUnion;
  u.name = "";
  u.size = 8;
  u.members = {{"p", 4, 0, 0}, {"l", 3, 0, 0}};
  bt.types[7] = scalar(1);
  bt.types[8].kind = Kind::kArray;
  bt.types[8].size = 8;
  bt.types[8].target = 7;
  bt.types[8].nelems = 8;
  bt.types[9].kind = Kind::kStruct;
  bt.types[9].name = "far";
  bt.types[9].size = 64;
  bt.types[9].opaque = true;
  bt.types[10].kind = Kind::kPtr;
  bt.types[10].size = 8;
  bt.types[10].target = 9;
  bt.task_struct = 1;
  return bt;
}

VerifyResult verify_btf(const std::string& body, std::uint32_t log_level = 1) {
  static const KernelBtfTypes bt = types();
  ProgramImage program;
  program.name = "test";
  program.section = "perf_event";
  program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  program.insns = assemble_or_fail("call get_current_task_btf\n" + body);
  VerifyOptions options;
  options.gpl_compatible = true;
  options.maps = &shared_maps();
  options.kernel_btf = &bt;
  options.log_level = log_level;
  return verify(program, options);
}

TEST(VerifierBtfAccess, ScalarsBitfieldsArraysAndNestedStructs) {
  EXPECT_TRUE(verify_btf("ldxw %r1, [%r0+0]\nmov %r0, 0\nexit\n").accepted);
  // A load covering the bitfield's bytes is a scalar.
  EXPECT_TRUE(verify_btf("ldxb %r1, [%r0+4]\nmov %r0, 0\nexit\n").accepted);
  // Inside an array of chars, across its elements, up to its end.
  EXPECT_TRUE(verify_btf("ldxdw %r1, [%r0+40]\nmov %r0, 0\nexit\n").accepted);
  EXPECT_TRUE(verify_btf("ldxw %r1, [%r0+44]\nmov %r0, 0\nexit\n").accepted);
  // A nested struct's member.
  EXPECT_TRUE(verify_btf("ldxdw %r1, [%r0+16]\nmov %r0, 0\nexit\n").accepted);
}

TEST(VerifierBtfAccess, HolesPastMembersAndPartialPointers) {
  EXPECT_TRUE(rejected(verify_btf("ldxdw %r1, [%r0+8]\nmov %r0, 0\nexit\n"), EINVAL,
                       "struct task_struct doesn't have field at offset 8"));
  EXPECT_TRUE(rejected(verify_btf("ldxdw %r1, [%r0+0]\nmov %r0, 0\nexit\n"), EACCES,
                       "access beyond the end of member pid (mend:4) in struct task_struct with "
                       "off 0 size 8"));
  EXPECT_TRUE(
      rejected(verify_btf("ldxw %r1, [%r0+24]\nmov %r0, 0\nexit\n"), EACCES,
               "cannot access ptr member far with moff 8 in struct inner with off 8 size 4"));
  EXPECT_TRUE(rejected(verify_btf("ldxb %r1, [%r0+48]\nmov %r0, 0\nexit\n"), EACCES,
                       "access beyond struct task_struct at off 48 size 1"));
  EXPECT_TRUE(
      rejected(verify_btf("stw [%r0+0], 1\nmov %r0, 0\nexit\n"), EACCES, "only read is supported"));
  EXPECT_TRUE(rejected(verify_btf("ldxw %r1, [%r0-4]\nmov %r0, 0\nexit\n"), EACCES,
                       "R0 is ptr_task_struct invalid negative access: off=-4"));
}

TEST(VerifierBtfAccess, PointersTheirTrustAndOpaqueStructs) {
  // A pointer in a union of two members: untrusted; loads through it still allowed.
  const VerifyResult via_union =
      verify_btf("ldxdw %r1, [%r0+32]\nldxw %r2, [%r1+0]\nmov %r0, 0\nexit\n", 2);
  EXPECT_TRUE(via_union.accepted) << via_union.log;
  EXPECT_NE(via_union.log.find("R1=untrusted_ptr_"), std::string::npos) << via_union.log;
  // The task itself is trusted.
  EXPECT_NE(via_union.log.find("R0=trusted_ptr_"), std::string::npos) << via_union.log;
  // A struct the table does not describe.
  EXPECT_TRUE(rejected(verify_btf("ldxdw %r1, [%r0+24]\nldxdw %r2, [%r1+0]\nmov %r0, 0\nexit\n"),
                       EACCES, "struct far is more than 3 pointer dereferences"));
}

TEST(VerifierBtfAccess, LoadsThroughBtfPointersBecomeProbeLoads) {
  const VerifyResult r = verify_btf("ldxw %r1, [%r0+0]\nmov %r0, %r1\nexit\n");
  ASSERT_TRUE(r.accepted) << r.log;
  ASSERT_GE(r.insns.size(), 2u);
  EXPECT_EQ(r.insns[1].code, BPF_LDX | kModeProbeMem | BPF_W);
}

TEST(VerifierBtfAccess, WithoutKernelTypesTheHelpersAreRefused) {
  ProgramImage program;
  program.name = "test";
  program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  program.insns = assemble_or_fail("call get_current_task_btf\nmov %r0, 0\nexit\n");
  VerifyOptions options;
  options.gpl_compatible = true;
  options.maps = &shared_maps();
  EXPECT_TRUE(rejected(verify(program, options), EINVAL,
                       "types its pointers with the kernel's BTF, which the program's image does "
                       "not carry"));
}

}  // namespace
}  // namespace userperf::bpf
