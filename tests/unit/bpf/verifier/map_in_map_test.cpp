// Map-in-map: bpf_map_lookup_elem on an ARRAY_OF_MAPS / HASH_OF_MAPS gives a maybe-NULL value
// which, NULL-checked, is a map pointer typed by the outer map's inner template (the kernel's
// inner_map_meta), usable as the map argument of the map helpers; an outer map goes to
// bpf_map_lookup_elem only. Each verdict is also the kernel's when it can be asked.
#include <linux/bpf.h>

#include <string>

#include "verifier_test_support.hpp"

namespace userperf::bpf::verifier_test {
namespace {

// r0 = lookup(outer, key 0) with the key at fp-8 (u64 for the hash of maps).
std::string outer_lookup(const char* outer) {
  return std::string("stdw [%r10-8], 0\nmov %r2, %r10\nadd %r2, -8\nlddw %r1, map:") + outer +
         "\ncall map_lookup_elem\n";
}

// Then, with the inner map in r1, look up key 1 (at fp-16) in it.
constexpr const char* kInnerLookup = R"(
    mov %r1, %r0
    stw [%r10-16], 1
    mov %r2, %r10
    add %r2, -16
    call map_lookup_elem
    jeq %r0, 0, +1
)";

TEST(VerifierMapInMap, InnerMapOfAnArrayOfMapsIsUsableAfterTheNullCheck) {
  // The inner template's value is 16 bytes: its last u64 is readable.
  EXPECT_TRUE(accepted(verify_text(outer_lookup("array_of_maps") + "jeq %r0, 0, +8\n" +
                                   kInnerLookup + "ldxdw %r0, [%r0+8]\nmov %r0, 0\nexit\n")));
}

TEST(VerifierMapInMap, InnerMapOfAHashOfMapsIsUsableAfterTheNullCheck) {
  EXPECT_TRUE(accepted(verify_text(outer_lookup("hash_of_maps") + "jeq %r0, 0, +8\n" +
                                   kInnerLookup + "stdw [%r0+0], 3\nmov %r0, 0\nexit\n")));
  // Update and delete in the inner map take the template's key and value sizes.
  EXPECT_TRUE(accepted(verify_text(outer_lookup("hash_of_maps") + R"(
    jeq %r0, 0, +14
    mov %r1, %r0
    stw [%r10-16], 1
    stdw [%r10-24], 5
    mov %r2, %r10
    add %r2, -16
    mov %r3, %r10
    add %r3, -24
    mov %r4, 0
    mov %r6, %r1
    call map_update_elem
    mov %r1, %r6
    mov %r2, %r10
    add %r2, -16
    call map_delete_elem
    mov %r0, 0
    exit
)")));
}

TEST(VerifierMapInMap, InnerValueAccessIsBoundedByTheTemplate) {
  EXPECT_TRUE(rejected(verify_text(outer_lookup("array_of_maps") + "jeq %r0, 0, +8\n" +
                                   kInnerLookup + "ldxdw %r0, [%r0+16]\nmov %r0, 0\nexit\n"),
                       EACCES, "invalid access to map value, value_size=16 off=16 size=8"));
  EXPECT_TRUE(rejected(verify_text(outer_lookup("hash_of_maps") + "jeq %r0, 0, +8\n" +
                                   kInnerLookup + "ldxdw %r0, [%r0+4]\nmov %r0, 0\nexit\n"),
                       EACCES, "invalid access to map value, value_size=8 off=4 size=8"));
}

TEST(VerifierMapInMap, TheMaybeNullResultIsNoMap) {
  // Not NULL-checked: a map value or NULL, which the map argument refuses.
  EXPECT_TRUE(
      rejected(verify_text(outer_lookup("array_of_maps") + kInnerLookup + "mov %r0, 0\nexit\n"),
               EACCES, "R1 type=map_value_or_null expected=map_ptr"));
  // Nor may it be read as a value before or after the check.
  EXPECT_TRUE(
      rejected(verify_text(outer_lookup("hash_of_maps") + "ldxdw %r0, [%r0+0]\nmov %r0, 0\nexit\n"),
               EACCES, "R0 invalid mem access 'map_value_or_null'"));
}

TEST(VerifierMapInMap, OuterMapsGoToLookupOnly) {
  EXPECT_TRUE(rejected(verify_text(R"(
    stw [%r10-4], 0
    stw [%r10-8], 0
    mov %r2, %r10
    add %r2, -4
    mov %r3, %r10
    add %r3, -8
    mov %r4, 0
    lddw %r1, map:array_of_maps
    call map_update_elem
    mov %r0, 0
    exit
)"),
                       EINVAL, "cannot pass map_type 12 into func bpf_map_update_elem#2"));
  EXPECT_TRUE(rejected(verify_text(R"(
    stdw [%r10-8], 0
    mov %r2, %r10
    add %r2, -8
    lddw %r1, map:hash_of_maps
    call map_delete_elem
    mov %r0, 0
    exit
)"),
                       EINVAL, "cannot pass map_type 13 into func bpf_map_delete_elem#3"));
  // An outer map's key is its own: a 4-byte key at fp-4 for the u64-keyed hash of maps runs past
  // the frame.
  EXPECT_TRUE(rejected(verify_text(R"(
    stw [%r10-4], 0
    mov %r2, %r10
    add %r2, -4
    lddw %r1, map:hash_of_maps
    call map_lookup_elem
    mov %r0, 0
    exit
)"),
                       EINVAL, "invalid indirect access to stack R2 off=-4 size=8"));
}

TEST(VerifierMapInMap, AnInnerMapIsNoOuterMap) {
  // A NULL-checked inner map of an ARRAY template goes to bpf_tail_call no more than any array.
  EXPECT_TRUE(rejected(verify_text("mov %r6, %r1\n" + outer_lookup("array_of_maps") + R"(
    jeq %r0, 0, +5
    mov %r1, %r6
    mov %r2, %r0
    mov %r3, 0
    call tail_call
    mov %r0, 0
    exit
)"),
                       EINVAL, "cannot pass map_type 2 into func bpf_tail_call#12"));
}

}  // namespace
}  // namespace userperf::bpf::verifier_test
