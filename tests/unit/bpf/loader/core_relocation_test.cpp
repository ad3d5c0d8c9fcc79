// CO-RE relocations (.BTF.ext): the kinds userperf applies are applied against the running
// kernel's BTF exactly as libbpf applies them (compared instruction by instruction with what
// libbpf loads into the kernel); an object with a kind it does not apply is refused, naming the
// program, the instruction and the relocation, instead of running clang's placeholder.
#include <bpf/btf.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bpf/loader/core_apply.hpp"
#include "bpf/loader/elf_loader.hpp"
#include "unit/bpf/loader/fixture_objects.hpp"

namespace userperf::bpf {
namespace {

using testing::fixture_path;
using testing::read_fixture;

// libbpf's load of a fixture into the running kernel, which applies its CO-RE relocations: the
// program's instructions as libbpf passed them to BPF_PROG_LOAD.
std::map<std::string, std::vector<Insn>> libbpf_loaded_insns(const std::string& fixture,
                                                             std::string& why_not) {
  std::map<std::string, std::vector<Insn>> out;
  testing::BpfObjectPtr object = testing::libbpf_open(fixture);
  if (!object) {
    why_not = "libbpf cannot open " + fixture;
    return out;
  }
  const int err = bpf_object__load(object.get());
  if (err != 0) {
    why_not = "libbpf cannot load " + fixture + " into the kernel: " + std::strerror(-err);
    return out;
  }
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, object.get()) {
    const auto* insns = reinterpret_cast<const Insn*>(bpf_program__insns(prog));
    out[bpf_program__name(prog)] = std::vector<Insn>(insns, insns + bpf_program__insn_cnt(prog));
  }
  return out;
}

TEST(CoreRelocations, AppliedAgainstTheKernelAsLibbpfAppliesThem) {
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
    GTEST_SKIP() << "the kernel has no BTF (/sys/kernel/btf/vmlinux): nothing to relocate against";
  }
  const auto image = load_elf_file(fixture_path("core_kernel"));
  ASSERT_TRUE(image.ok()) << image.error().message;
  std::string why_not;
  const auto reference = libbpf_loaded_insns("core_kernel", why_not);
  if (reference.empty() && geteuid() != 0) GTEST_SKIP() << why_not << " (not root)";
  ASSERT_FALSE(reference.empty()) << why_not;
  ASSERT_EQ(image->programs.size(), 9u);
  std::map<std::string, const ProgramImage*> ours;
  for (const ProgramImage& program : image->programs) ours[program.name] = &program;
  for (const auto& [name, insns] : reference) {
    ASSERT_TRUE(ours.count(name)) << name;
    const std::vector<Insn>& mine = ours[name]->insns;
    ASSERT_EQ(mine.size(), insns.size()) << name;
    for (std::size_t i = 0; i < insns.size(); ++i) {
      EXPECT_EQ(std::memcmp(&mine[i], &insns[i], sizeof(Insn)), 0)
          << name << " instruction " << i << ": userperf imm " << mine[i].imm << " off "
          << mine[i].off << ", libbpf imm " << insns[i].imm << " off " << insns[i].off;
    }
  }
  // What the relocated instructions hold (clang's placeholders are in the comments).
  const auto& pid = ours["pid_offset"]->insns;
  EXPECT_NE(pid[0].imm, 4) << "task_struct's pid is not at the local declaration's offset";
  EXPECT_GT(pid[0].imm, 0);
  std::printf("task_struct.pid: userperf relocates 4 to %d, libbpf to %d\n", pid[0].imm,
              reference.at("pid_offset")[0].imm);
  const auto& field = ours["field_facts"]->insns;
  EXPECT_EQ(field[0].imm, 1);  // field_exists(tgid)
  EXPECT_EQ(field[1].imm, 4);  // field_size(tgid): int
  EXPECT_EQ(field[5].imm, 0);  // field_exists(no_such_field): 1 -> 0
  const auto& type = ours["type_facts"]->insns;
  EXPECT_EQ(type[0].imm, 1);  // type_exists(task_struct___missing): a flavor of task_struct
  EXPECT_GT(type[1].imm, 8);  // type_size(task_struct): 8 -> the kernel's
  EXPECT_EQ(type[5].imm, 0);  // type_exists(type_not_in_any_kernel): 1 -> 0
  const auto& enums = ours["enum_facts"]->insns;
  EXPECT_EQ(enums[0].imm, 1);                  // enum_value_exists(BPF_MAP_TYPE_HASH___local)
  EXPECT_EQ(enums[2].imm, BPF_MAP_TYPE_HASH);  // enum_value(BPF_MAP_TYPE_HASH___local): 42 -> 1
  EXPECT_EQ(enums[7].imm, 0);  // enum_value_exists(NO_SUCH_ENUMERATOR___local): 1 -> 0
  // A 1-bit bitfield: its load unit's offset and size, and the shifts that isolate it.
  const auto& bits = ours["bitfield_read"]->insns;
  std::printf("task_struct.sched_contributes_to_load: load %d bytes at %d, <<= %d, >>= %d\n",
              bits[7].imm, bits[3].imm, bits[10].imm, bits[15].imm);
  EXPECT_EQ(bits[13].imm, 63);  // rshift_u64 (signed path): 64 - 1 bit
  EXPECT_EQ(bits[15].imm, 63);  // rshift_u64 (unsigned path)
  const auto& sign = ours["signedness"]->insns;
  EXPECT_EQ(sign[0].imm, 0);  // signed(__state): unsigned int
  EXPECT_EQ(sign[1].imm, 1);  // signed(prio): int
  const auto& ids = ours["type_ids"]->insns;
  std::printf("task_struct's BTF id: object %d, kernel %d\n", ids[0].imm, ids[2].imm);
  EXPECT_EQ(ids[0].imm, 11);  // local_type_id: the object's own, unchanged
  EXPECT_NE(ids[2].imm, 11);  // target_type_id: the kernel's (bpftool btf dump: [114] on 6.18)
  EXPECT_GT(ids[2].imm, 0);
  // task_struct has no `state` since 5.14: the guard reads 0 and the guarded read is poisoned.
  const auto& guarded = ours["guarded_missing_field"]->insns;
  EXPECT_EQ(guarded[1].imm, 0);                    // field_exists(state): 1 -> 0
  EXPECT_EQ(guarded[3].code, BPF_JMP | BPF_CALL);  // byte_off(state): `r2 = 0` -> poison
  EXPECT_EQ(guarded[3].imm, 195896080);
  // struct pid's numbers[] has size 0 (flexible): its offset is relocated all the same (`r1 =
  // 4`, the local declaration's, -> the kernel's), as libbpf does; it was refused as "no size".
  const auto& flexible = ours["flexible_array"]->insns;
  std::printf("struct pid: level at %d, numbers[] at %d\n", flexible[0].imm, flexible[8].imm);
  EXPECT_EQ(flexible[8].code, BPF_ALU64 | BPF_MOV | BPF_K);
  EXPECT_GT(flexible[8].imm, 4);
}

TEST(CoreRelocations, ObjectsWithoutThemLoad) {
  // -g objects have a .BTF.ext (function and line info) without CO-RE records.
  const auto image = load_elf_file(fixture_path("filter_period"));
  ASSERT_TRUE(image.ok()) << image.error().message;
}

// The file offset of a section's bytes, found through the section headers.
std::size_t section_offset(const std::vector<std::uint8_t>& bytes, const char* wanted) {
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  Elf64_Shdr names;
  std::memcpy(&names, bytes.data() + header.e_shoff + header.e_shstrndx * sizeof(Elf64_Shdr),
              sizeof names);
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    std::memcpy(&section, bytes.data() + header.e_shoff + i * sizeof(Elf64_Shdr), sizeof section);
    const char* name =
        reinterpret_cast<const char*>(bytes.data() + names.sh_offset) + section.sh_name;
    if (std::strcmp(name, wanted) == 0) return section.sh_offset;
  }
  return 0;
}

TEST(CoreRelocations, ObjectWithAKindNotAppliedIsRefused) {
  // core_read.bpf.c with its bpf_core_type_id_kernel record turned into a type_matches one (the
  // kind clang 14 cannot emit, and the one kind userperf does not apply): refused, named.
  std::vector<std::uint8_t> bytes = read_fixture("core_read");
  const std::size_t ext = section_offset(bytes, ".BTF.ext");
  ASSERT_NE(ext, 0u);
  std::uint32_t hdr_len = 0, core_off = 0, core_len = 0, record_size = 0;
  std::memcpy(&hdr_len, bytes.data() + ext + 4, 4);
  std::memcpy(&core_off, bytes.data() + ext + 24, 4);
  std::memcpy(&core_len, bytes.data() + ext + 28, 4);
  const std::size_t start = ext + hdr_len + core_off;
  std::memcpy(&record_size, bytes.data() + start, 4);
  bool mutated = false;
  for (std::size_t at = start + 4; at < start + core_len && !mutated;) {
    std::uint32_t count = 0;
    std::memcpy(&count, bytes.data() + at + 4, 4);
    at += 8;
    for (std::uint32_t i = 0; i < count; ++i, at += record_size) {
      std::uint32_t kind = 0;
      std::memcpy(&kind, bytes.data() + at + 12, 4);
      if (kind == BPF_CORE_TYPE_ID_TARGET) {
        const std::uint32_t type_matches = 12;
        std::memcpy(bytes.data() + at + 12, &type_matches, 4);
        mutated = true;
        break;
      }
    }
  }
  ASSERT_TRUE(mutated);
  const auto image = load_elf_memory(bytes, "core_read.bpf.o");
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().code, EOPNOTSUPP);
  EXPECT_NE(image.error().message.find(
                "program 'kernel_type_id' (section 'perf_event') instruction 0: CO-RE "
                "relocation 'type_matches' (type match) of struct task_struct, access 0: "
                "this CO-RE relocation kind is not applied by userperf yet"),
            std::string::npos)
      << image.error().message;
  // Unmutated, every relocation in it is applied (against the kernel's BTF, where there is one).
  if (access("/sys/kernel/btf/vmlinux", R_OK) == 0) {
    EXPECT_TRUE(load_elf_file(fixture_path("core_read")).ok());
  }
}

TEST(CoreRelocations, MalformedRecordsAreRefusedAsSuch) {
  const std::vector<std::uint8_t> original = read_fixture("core_read");
  const std::size_t ext = section_offset(original, ".BTF.ext");
  ASSERT_NE(ext, 0u);
  std::uint32_t hdr_len = 0;
  std::uint32_t core_off = 0;
  std::memcpy(&hdr_len, original.data() + ext + 4, 4);
  std::memcpy(&core_off, original.data() + ext + 24, 4);
  ASSERT_GE(hdr_len, 32u);

  auto refused_with = [&](std::vector<std::uint8_t> bytes, const std::string& what) {
    const auto image = load_elf_memory(bytes, "core_read.bpf.o");
    ASSERT_FALSE(image.ok()) << what;
    EXPECT_EQ(image.error().code, EINVAL) << image.error().message;
    EXPECT_NE(image.error().message.find(what), std::string::npos) << image.error().message;
  };
  {
    std::vector<std::uint8_t> bytes = original;  // core_relo_off far outside the section
    const std::uint32_t far = 0x7ffffff0;
    std::memcpy(bytes.data() + ext + 24, &far, 4);
    refused_with(bytes, "CO-RE records outside the section");
  }
  {
    std::vector<std::uint8_t> bytes = original;  // record size 4
    const std::uint32_t small = 4;
    std::memcpy(bytes.data() + ext + hdr_len + core_off, &small, 4);
    refused_with(bytes, "CO-RE record size below 16 bytes");
  }
  {
    std::vector<std::uint8_t> bytes = original;  // first record's instruction offset unaligned
    const std::uint32_t unaligned = 3;
    std::memcpy(bytes.data() + ext + hdr_len + core_off + 4 + 8, &unaligned, 4);
    refused_with(bytes, "is not on an instruction");
  }
}

// The candidates of a CO-RE root type: every type whose name, a "___flavor" suffix dropped, is
// the one asked, in id order, whatever its kind (the caller filters kinds); the same when asked
// again, now from memory.
TEST(CoreRelocations, TypesNamedAreEveryFlavorOfTheName) {
  btf* raw = btf__new_empty();
  ASSERT_NE(raw, nullptr);
  const int u32 = btf__add_int(raw, "u32", 4, 0);
  const int point = btf__add_struct(raw, "point", 4);
  ASSERT_EQ(btf__add_field(raw, "x", u32, 0, 0), 0);
  const int other = btf__add_struct(raw, "pointer", 4);
  ASSERT_EQ(btf__add_field(raw, "x", u32, 0, 0), 0);
  const int flavor = btf__add_struct(raw, "point___v2", 4);
  ASSERT_EQ(btf__add_field(raw, "x", u32, 0, 0), 0);
  const int typedef_id = btf__add_typedef(raw, "point", point);
  ASSERT_GT(btf__add_struct(raw, nullptr, 0), 0);  // anonymous
  ASSERT_GT(typedef_id, 0);
  ASSERT_GT(other, 0);
  std::uint32_t size = 0;
  const auto* bytes = static_cast<const std::uint8_t*>(btf__raw_data(raw, &size));
  auto handle = loader::BtfHandle::from_bytes({bytes, size});
  btf__free(raw);
  ASSERT_TRUE(handle) << handle.error().message;

  const std::vector<std::uint32_t> expected = {static_cast<std::uint32_t>(point),
                                               static_cast<std::uint32_t>(flavor),
                                               static_cast<std::uint32_t>(typedef_id)};
  EXPECT_EQ((*handle)->types_named("point"), expected);
  EXPECT_EQ((*handle)->types_named("point"), expected);
  EXPECT_EQ((*handle)->types_named("pointer"),
            std::vector<std::uint32_t>{static_cast<std::uint32_t>(other)});
  EXPECT_TRUE((*handle)->types_named("poin").empty());
  EXPECT_TRUE((*handle)->types_named("").empty());
}

}  // namespace
}  // namespace userperf::bpf
