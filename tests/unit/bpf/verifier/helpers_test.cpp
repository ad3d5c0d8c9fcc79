// Helper calls: prototypes, map arguments, NULL checks on lookups, GPL, map compatibility.
#include <linux/bpf.h>

#include "bpf/verifier/helper_protos.hpp"
#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

constexpr const char* kLookup = R"(
    stw [%r10-4], 0
    mov %r2, %r10
    add %r2, -4
    lddw %r1, map:hash
    call map_lookup_elem
)";

TEST(VerifierHelpers, PrototypeTable) {
  const HelperProto* lookup = perf_event_helper_proto(BPF_FUNC_map_lookup_elem);
  ASSERT_NE(lookup, nullptr);
  EXPECT_EQ(lookup->ret, RetType::kPtrToMapValueOrNull);
  EXPECT_EQ(lookup->args[0], ArgType::kConstMapPtr);
  EXPECT_EQ(lookup->args[1], ArgType::kPtrToMapKey);
  EXPECT_FALSE(lookup->gpl_only);
  for (int id :
       {BPF_FUNC_perf_event_output, BPF_FUNC_get_stackid, BPF_FUNC_get_stack,
        BPF_FUNC_perf_prog_read_value, BPF_FUNC_probe_read_kernel, BPF_FUNC_trace_printk,
        BPF_FUNC_probe_read_user, BPF_FUNC_probe_read_user_str, BPF_FUNC_get_current_task}) {
    ASSERT_NE(perf_event_helper_proto(id), nullptr) << id;
    EXPECT_TRUE(perf_event_helper_proto(id)->gpl_only) << id;
  }
  for (int id : {BPF_FUNC_ktime_get_ns, BPF_FUNC_ktime_get_boot_ns, BPF_FUNC_get_current_pid_tgid,
                 BPF_FUNC_get_current_uid_gid, BPF_FUNC_get_current_comm,
                 BPF_FUNC_get_smp_processor_id, BPF_FUNC_get_numa_node_id, BPF_FUNC_get_prandom_u32,
                 BPF_FUNC_map_update_elem, BPF_FUNC_map_delete_elem}) {
    ASSERT_NE(perf_event_helper_proto(id), nullptr) << id;
    EXPECT_FALSE(perf_event_helper_proto(id)->gpl_only) << id;
  }
  EXPECT_EQ(perf_event_helper_proto(BPF_FUNC_skb_store_bytes), nullptr);
  EXPECT_EQ(perf_event_helper_proto(-1), nullptr);
  EXPECT_EQ(perf_event_helper_proto(100000), nullptr);
}

TEST(VerifierHelpers, LookupResultMustBeNullChecked) {
  EXPECT_TRUE(
      accepted(verify_text(std::string(kLookup) +
                           "jeq %r0, 0, out\nldxdw %r0, [%r0+0]\nexit\nout:\nmov %r0, 0\nexit\n")));
  EXPECT_TRUE(rejected(verify_text(std::string(kLookup) + "ldxdw %r0, [%r0+0]\nexit\n"), EACCES,
                       "R0 invalid mem access 'map_value_or_null'"));
  EXPECT_TRUE(
      rejected(verify_text(std::string(kLookup) + "add %r0, 8\nmov %r0, 0\nexit\n"), EACCES,
               "R0 pointer arithmetic on map_value_or_null prohibited, null-check it first"));
  // The check on a copy marks the original too (same id).
  EXPECT_TRUE(accepted(verify_text(std::string(kLookup) +
                                   "mov %r6, %r0\njne %r6, 0, use\nmov %r0, 0\nexit\n"
                                   "use:\nldxdw %r0, [%r0+0]\nexit\n")));
  // Out of the value's 8 bytes.
  EXPECT_TRUE(
      rejected(verify_text(std::string(kLookup) +
                           "jeq %r0, 0, out\nldxdw %r0, [%r0+4]\nexit\nout:\nmov %r0, 0\nexit\n"),
               EACCES, "invalid access to map value, value_size=8 off=4 size=8"));
}

TEST(VerifierHelpers, ArrayLookupWithConstantKeyNeedsNoNullCheck) {
  // Linux 6.14+: an in-range constant key of an array map cannot miss.
  const char* in_range = R"(
    mov %r1, 3
    stxw [%r10-8], %r1
    mov %r2, %r10
    add %r2, -8
    lddw %r1, map:array
    call map_lookup_elem
    ldxdw %r0, [%r0+8]
    exit
  )";
  EXPECT_TRUE(accepted(verify_text(in_range)));
  std::string out_of_range = in_range;
  out_of_range.replace(out_of_range.find("mov %r1, 3"), 10, "mov %r1, 4");
  EXPECT_TRUE(
      rejected(verify_text(out_of_range), EACCES, "invalid mem access 'map_value_or_null'"));
}

TEST(VerifierHelpers, MapArguments) {
  EXPECT_TRUE(
      rejected(verify_text("mov %r1, 0\nmov %r2, %r10\nadd %r2, -4\ncall map_lookup_elem\nexit\n"),
               EACCES, "R1 type=scalar expected=map_ptr"));
  EXPECT_TRUE(rejected(verify_text("lddw %r1, map:hash\nmov %r2, 0\ncall map_lookup_elem\nexit\n"),
                       EACCES, "R2 type=scalar expected=fp"));
  EXPECT_TRUE(rejected(
      verify_text("lddw %r1, map:hash\nmov %r2, %r10\nadd %r2, -2\ncall map_lookup_elem\nexit\n"),
      EINVAL, "invalid indirect access to stack R2 off=-2 size=4"));
  EXPECT_TRUE(rejected(verify_text("lddw %r1, map:hash\ncall map_lookup_elem\nexit\n"), EACCES,
                       "R2 !read_ok"));
  // Update: key and value memory of the right sizes.
  EXPECT_TRUE(accepted(verify_text(R"(
    stw [%r10-4], 1
    stdw [%r10-16], 2
    lddw %r1, map:hash
    mov %r2, %r10
    add %r2, -4
    mov %r3, %r10
    add %r3, -16
    mov %r4, 0
    call map_update_elem
    exit
  )")));
  EXPECT_TRUE(rejected(verify_text(R"(
    lddw %r1, map:hash
    mov %r2, %r10
    add %r2, -4
    mov %r3, %r10
    add %r3, -4
    mov %r4, 0
    call map_update_elem
    exit
  )"),
                       EINVAL, "invalid indirect access to stack R3 off=-4 size=8"));
}

TEST(VerifierHelpers, CallerSavedRegistersAreClobbered) {
  EXPECT_TRUE(rejected(verify_text("mov %r6, %r1\ncall ktime_get_ns\nmov %r0, %r1\nexit\n"), EACCES,
                       "R1 !read_ok"));
  EXPECT_TRUE(
      accepted(verify_text("mov %r6, %r1\ncall ktime_get_ns\nldxdw %r0, [%r6+168]\nexit\n")));
}

TEST(VerifierHelpers, GplOnlyHelpers) {
  const char* program = R"(
    stdw [%r10-8], 0
    mov %r4, %r10
    add %r4, -8
    lddw %r2, map:events
    lddw %r3, 0xffffffff
    mov %r5, 8
    call perf_event_output
    mov %r0, 0
    exit
  )";
  EXPECT_TRUE(accepted(verify_text(program, true)));
  EXPECT_TRUE(rejected(verify_text(program, false), EINVAL,
                       "cannot call GPL-restricted function from non-GPL compatible program"));
  EXPECT_TRUE(accepted(verify_text("call ktime_get_ns\nexit\n", false)));
}

TEST(VerifierHelpers, UnknownAndUnavailableHelpers) {
  EXPECT_TRUE(rejected(verify_text("call skb_store_bytes\nexit\n"), EINVAL,
                       "program of this type cannot use helper bpf_skb_store_bytes#9"));
  EXPECT_TRUE(rejected(verify_insns({make_insn(BPF_JMP | BPF_CALL, 0, 0, 0, 5000),
                                     make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)}),
                       EINVAL, "invalid func unknown#5000"));
}

TEST(VerifierHelpers, MapTypeMustSuitTheHelper) {
  EXPECT_TRUE(rejected(verify_text(R"(
    stdw [%r10-8], 0
    mov %r4, %r10
    add %r4, -8
    lddw %r2, map:hash
    mov %r3, 0
    mov %r5, 8
    call perf_event_output
    exit
  )"),
                       EINVAL, "cannot pass map_type 1 into func bpf_perf_event_output#25"));
  EXPECT_TRUE(rejected(verify_text(R"(
    stw [%r10-4], 0
    mov %r2, %r10
    add %r2, -4
    lddw %r1, map:events
    call map_lookup_elem
    mov %r0, 0
    exit
  )"),
                       EINVAL, "cannot pass map_type 4 into func bpf_map_lookup_elem#1"));
  EXPECT_TRUE(accepted(verify_text("lddw %r2, map:stacks\nmov %r3, 0\ncall get_stackid\nexit\n")));
}

TEST(VerifierHelpers, MemoryAndSizeArguments) {
  const char* comm = R"(
    mov %r1, %r10
    add %r1, -16
    mov %r2, 16
    call get_current_comm
    ldxdw %r0, [%r10-16]
    exit
  )";
  EXPECT_TRUE(accepted(verify_text(comm)));
  std::string too_big = comm;
  too_big.replace(too_big.find("mov %r2, 16"), 11, "mov %r2, 24");
  EXPECT_TRUE(rejected(verify_text(too_big), EINVAL,
                       "invalid indirect access to stack R1 off=-16 size=24"));
  std::string zero = comm;
  zero.replace(zero.find("mov %r2, 16"), 11, "mov %r2, 0");
  EXPECT_TRUE(rejected(verify_text(zero), EACCES, "R2 invalid zero-sized read"));
  // A variable size must be bounded; its bound is the access checked.
  EXPECT_TRUE(accepted(verify_text(R"(
    mov %r6, %r1
    call get_prandom_u32
    mov %r2, %r0
    and %r2, 31
    mov %r1, %r10
    add %r1, -32
    mov %r3, 0
    call probe_read_user
    mov %r0, 0
    exit
  )")));
  EXPECT_TRUE(rejected(verify_text(R"(
    call get_prandom_u32
    mov %r2, %r0
    rsh %r2, 1
    mov %r1, %r10
    add %r1, -32
    mov %r3, 0
    call probe_read_user
    mov %r0, 0
    exit
  )"),
                       EACCES, "R2 unbounded memory access"));
  EXPECT_TRUE(rejected(verify_text(R"(
    call get_prandom_u32
    mov %r2, %r0
    mov %r1, %r10
    add %r1, -32
    mov %r3, 0
    call probe_read_user
    mov %r0, 0
    exit
  )"),
                       EACCES, "R2 min value is negative"));
  // ctx arguments must be the unmodified ctx.
  EXPECT_TRUE(rejected(verify_text(R"(
    add %r1, 8
    mov %r2, %r10
    add %r2, -24
    mov %r3, 24
    call perf_prog_read_value
    exit
  )"),
                       EACCES, "dereference of modified ctx ptr R1 off=8 disallowed"));
}

TEST(VerifierHelpers, ReadOnlyGlobalDataIsConstant) {
  // .rodata holds 7: the comparison is decided and the bad branch never walked.
  EXPECT_TRUE(accepted(verify_text(R"(
    lddw %r1, map_value:.rodata+0
    ldxdw %r2, [%r1+0]
    jeq %r2, 7, ok
    ldxdw %r0, [%r2+0]
  ok:
    mov %r0, 0
    exit
  )")));
  EXPECT_TRUE(
      rejected(verify_text("lddw %r1, map_value:.rodata+0\nstdw [%r1+0], 1\nmov %r0, 0\nexit\n"),
               EACCES, "write into map forbidden"));
  EXPECT_TRUE(
      accepted(verify_text("lddw %r1, map_value:.bss+8\nstdw [%r1+0], 1\nmov %r0, 0\nexit\n")));
  EXPECT_TRUE(
      rejected(verify_text("lddw %r1, map_value:.bss+8\nstdw [%r1+4], 1\nmov %r0, 0\nexit\n"),
               EACCES, "invalid access to map value, value_size=16 off=12 size=8"));
}

// bpf_perf_prog_read_value's buffer is uninitialised memory of any alignment: the kernel takes
// one at an odd stack offset (the runtime's helper copies into it, helper_table_test.cpp).
TEST(VerifierHelpers, PerfProgReadValueTakesAnUnalignedStackBuffer) {
  const Outcome r = verify_text(R"(
    mov %r2, %r10
    add %r2, -235
    mov %r3, 24
    call bpf_perf_prog_read_value
    mov %r0, 0
    exit
  )");
  EXPECT_TRUE(accepted(r));
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
