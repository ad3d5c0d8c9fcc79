// The loader against libbpf's own view of each fixture: the maps and programs libbpf's open
// finds, the instructions clang emitted, and (where the kernel lets libbpf load the object) the
// final instructions libbpf itself produces, which must equal ours once map fds are named.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "bpf/loader/elf_loader.hpp"
#include "support/kernel_bpf.hpp"
#include "unit/bpf/loader/fixture_objects.hpp"

namespace userperf::bpf {
namespace {

using testing::fixture_path;
using testing::libbpf_open;
using testing::loadable_fixtures;

const MapSpec* find_map(const ObjectImage& image, const std::string& name) {
  for (const MapSpec& map : image.maps) {
    if (map.name == name) return &map;
  }
  return nullptr;
}

bool is_pseudo_call(const Insn& insn) {
  return insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == BPF_PSEUDO_CALL;
}

class LibbpfCrossCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(LibbpfCrossCheck, MapsMatchLibbpfOpen) {
  auto image = load_elf_file(fixture_path(GetParam()));
  ASSERT_TRUE(image.ok()) << image.error().message;
  auto object = libbpf_open(GetParam());
  ASSERT_TRUE(object);
  std::size_t count = 0;
  bpf_map* map = nullptr;
  bool internal_seen = false;
  bpf_object__for_each_map(map, object.get()) {
    ++count;
    const std::string name = bpf_map__name(map);
    SCOPED_TRACE(name);
    const MapSpec* ours = find_map(*image, name);
    ASSERT_NE(ours, nullptr);
    EXPECT_EQ(ours->type, static_cast<std::uint32_t>(bpf_map__type(map)));
    EXPECT_EQ(ours->key_size, bpf_map__key_size(map));
    EXPECT_EQ(ours->value_size, bpf_map__value_size(map));
    EXPECT_EQ(ours->max_entries, bpf_map__max_entries(map));
    // libbpf adds BPF_F_MMAPABLE to global data so skeletons can mmap it; programs don't care.
    EXPECT_EQ(ours->map_flags, bpf_map__map_flags(map) & ~std::uint32_t{BPF_F_MMAPABLE});
    EXPECT_EQ(ours->global_data, bpf_map__is_internal(map));
    if (bpf_map__is_internal(map)) {
      internal_seen = true;
      std::size_t size = 0;
      const auto* bytes = static_cast<const std::uint8_t*>(bpf_map__initial_value(map, &size));
      ASSERT_NE(bytes, nullptr);
      EXPECT_EQ(ours->initial_value, std::vector<std::uint8_t>(bytes, bytes + size));
    } else {
      EXPECT_FALSE(internal_seen) << "BTF maps come first";
    }
  }
  EXPECT_EQ(image->maps.size(), count);
}

TEST_P(LibbpfCrossCheck, ProgramsMatchLibbpfOpenAndClangOutput) {
  auto image = load_elf_file(fixture_path(GetParam()));
  ASSERT_TRUE(image.ok()) << image.error().message;
  auto object = libbpf_open(GetParam());
  ASSERT_TRUE(object);
  std::size_t index = 0;
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, object.get()) {
    ASSERT_LT(index, image->programs.size());
    const ProgramImage& ours = image->programs[index++];
    SCOPED_TRACE(ours.name);
    EXPECT_EQ(ours.name, bpf_program__name(prog));
    EXPECT_EQ(ours.section, bpf_program__section_name(prog));
    EXPECT_EQ(ours.prog_type, static_cast<std::uint32_t>(bpf_program__type(prog)));
    // Before load, libbpf holds the main function as clang emitted it: ours starts with it,
    // changed only in relocated immediates and pseudo sources.
    const Insn* raw = bpf_program__insns(prog);
    const std::size_t raw_count = bpf_program__insn_cnt(prog);
    ASSERT_GE(ours.insns.size(), raw_count);
    for (std::size_t pc = 0; pc < raw_count; ++pc) {
      const Insn& a = ours.insns[pc];
      const Insn& b = raw[pc];
      EXPECT_EQ(a.code, b.code) << "pc " << pc;
      EXPECT_EQ(a.dst_reg, b.dst_reg) << "pc " << pc;
      EXPECT_EQ(a.off, b.off) << "pc " << pc;
      const bool relocatable = is_pseudo_call(b) || (pc > 0 && is_lddw(raw[pc - 1])) || is_lddw(b);
      if (!relocatable) {
        EXPECT_EQ(a.src_reg, b.src_reg) << "pc " << pc;
        EXPECT_EQ(a.imm, b.imm) << "pc " << pc;
      }
    }
  }
  EXPECT_EQ(index, image->programs.size());
}

// libbpf's load needs the kernel; its final instructions are the reference for ours.
TEST_P(LibbpfCrossCheck, InstructionsEqualLibbpfLoadedOnes) {
  auto image = load_elf_file(fixture_path(GetParam()));
  ASSERT_TRUE(image.ok()) << image.error().message;
  auto object = libbpf_open(GetParam());
  ASSERT_TRUE(object);
  libbpf_print_fn_t previous = libbpf_set_print(nullptr);
  const int err = bpf_object__load(object.get());
  libbpf_set_print(previous);
  if (err != 0 && testing::kernel_bpf::kernel_refuses_bpf(-err)) {
    GTEST_SKIP() << "the kernel refuses bpf(): " << std::strerror(-err);
  }
  ASSERT_EQ(err, 0) << "libbpf could not load " << GetParam();
  std::map<int, std::string> map_by_fd;
  bpf_map* map = nullptr;
  bpf_object__for_each_map(map, object.get()) map_by_fd[bpf_map__fd(map)] = bpf_map__name(map);

  std::size_t index = 0;
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, object.get()) {
    const ProgramImage& ours = image->programs.at(index++);
    SCOPED_TRACE(ours.name);
    const Insn* theirs = bpf_program__insns(prog);
    ASSERT_NE(theirs, nullptr);
    ASSERT_EQ(ours.insns.size(), bpf_program__insn_cnt(prog));
    for (std::size_t pc = 0; pc < ours.insns.size(); ++pc) {
      const Insn& a = ours.insns[pc];
      const Insn& b = theirs[pc];
      if (is_lddw(b) && (b.src_reg == BPF_PSEUDO_MAP_FD || b.src_reg == BPF_PSEUDO_MAP_VALUE)) {
        const int expected_src =
            b.src_reg == BPF_PSEUDO_MAP_FD ? BPF_PSEUDO_MAP_IDX : BPF_PSEUDO_MAP_IDX_VALUE;
        EXPECT_EQ(a.src_reg, expected_src) << "pc " << pc;
        EXPECT_EQ(a.code, b.code) << "pc " << pc;
        EXPECT_EQ(a.dst_reg, b.dst_reg) << "pc " << pc;
        ASSERT_GE(a.imm, 0) << "pc " << pc;
        ASSERT_LT(static_cast<std::size_t>(a.imm), image->maps.size()) << "pc " << pc;
        EXPECT_EQ(image->maps[static_cast<std::size_t>(a.imm)].name, map_by_fd[b.imm])
            << "pc " << pc;
        ASSERT_LT(pc + 1, ours.insns.size());
        EXPECT_EQ(ours.insns[pc + 1].imm, theirs[pc + 1].imm) << "offset at pc " << pc;
        ++pc;
        continue;
      }
      EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0)
          << "pc " << pc << ": code " << int{a.code} << "/" << int{b.code} << " imm " << a.imm
          << "/" << b.imm;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LibbpfCrossCheck, ::testing::ValuesIn(loadable_fixtures()),
                         testing::fixture_test_name);

}  // namespace
}  // namespace userperf::bpf
