// The object image codec (bpf/isa/image_codec.hpp): what `userperf record --bpf` writes for the
// recorded processes. An image decodes to what was encoded; every truncation and every bit flip
// of one decodes or is refused with an error, never read past its bytes (ASan build).
#include "bpf/isa/image_codec.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace userperf::bpf {
namespace {

// The kernel's struct types: void, task_struct { int pid; struct task_struct *leader; }.
KernelBtfTypes sample_kernel_types() {
  using Kind = KernelBtfType::Kind;
  KernelBtfType task;
  task.kind = Kind::kStruct;
  task.name = "task_struct";
  task.size = 16;
  task.members = {{"pid", 2, 0, 0}, {"group_leader", 3, 64, 0}};
  KernelBtfType int_type;
  int_type.kind = Kind::kScalar;
  int_type.name = "int";
  int_type.size = 4;
  KernelBtfType ptr;
  ptr.kind = Kind::kPtr;
  ptr.size = 8;
  ptr.target = 1;
  KernelBtfTypes bt;
  bt.types = {KernelBtfType{}, task, int_type, ptr};
  bt.task_struct = 1;
  return bt;
}

ObjectImage sample_image() {
  ObjectImage image;
  image.license = "GPL";
  image.kern_version = 0x60100;
  MapSpec counts;
  counts.name = "counts";
  counts.type = BPF_MAP_TYPE_HASH;
  counts.key_size = 8;
  counts.value_size = 16;
  counts.max_entries = 1024;
  MapSpec rodata;
  rodata.name = ".rodata";
  rodata.type = BPF_MAP_TYPE_ARRAY;
  rodata.key_size = 4;
  rodata.value_size = 5;
  rodata.max_entries = 1;
  rodata.map_flags = BPF_F_RDONLY_PROG;
  rodata.global_data = true;
  rodata.initial_value = {'h', 'e', 'l', 'l', 'o'};
  image.maps = {counts, rodata};
  ProgramImage program;
  program.name = "on_sample";
  program.section = "perf_event";
  program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  program.insns = {make_insn(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_IDX, 0, 0),
                   make_insn(0, 0, 0, 0, 0), make_insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1),
                   make_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)};
  program.btf_func_info = true;
  BtfFuncArg mem;
  mem.kind = BtfFuncArg::Kind::kMem;
  mem.mem_size = 16;
  BtfFuncArg unsized;
  unsized.kind = BtfFuncArg::Kind::kUnsized;
  unsized.size_error = -22;
  unsized.btf_kind = "FWD";
  unsized.type_name = "opaque";
  program.btf_funcs = {{0, "on_sample", true, true, {BtfFuncArg{}}},
                       {2, "helper", false, false, {mem, unsized}}};
  image.programs = {program};
  image.task_layout.present = true;
  image.task_layout.task_size = 9728;
  image.task_layout.pid = {1264, 4};
  image.task_layout.tgid = {1268, 4};
  image.task_layout.comm = {3024, 16};
  image.task_layout.real_parent = {1280, 8};
  image.task_layout.group_leader = {1336, 8};
  image.task_layout.stack = {32, 8};
  image.task_layout.thread_fsbase = {9600, 8};
  image.task_layout.mm = {1224, 8};
  image.task_layout.mm_size = 1344;
  image.task_layout.mm_start_stack = {328, 8};
  image.task_layout.mm_arg_start = {336, 8};
  image.task_layout.mm_arg_end = {344, 8};
  image.task_layout.vma_size = 184;
  image.task_layout.vma_start = {0, 8};
  image.task_layout.vma_flags = {32, 8};
  image.task_layout.vma_file = {88, 8};
  image.task_layout.dentry_size = 192;
  image.task_layout.dentry_iname = {56, 40};
  image.kernel_btf = std::make_shared<const KernelBtfTypes>(sample_kernel_types());
  return image;
}

bool same_insns(const std::vector<Insn>& a, const std::vector<Insn>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].code != b[i].code || a[i].dst_reg != b[i].dst_reg || a[i].src_reg != b[i].src_reg ||
        a[i].off != b[i].off || a[i].imm != b[i].imm) {
      return false;
    }
  }
  return true;
}

TEST(ImageCodec, DecodesWhatWasEncoded) {
  const ObjectImage image = sample_image();
  auto decoded = decode_object_image(encode_object_image(image));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->license, image.license);
  EXPECT_EQ(decoded->kern_version, image.kern_version);
  ASSERT_EQ(decoded->maps.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const MapSpec &a = decoded->maps[i], &b = image.maps[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.key_size, b.key_size);
    EXPECT_EQ(a.value_size, b.value_size);
    EXPECT_EQ(a.max_entries, b.max_entries);
    EXPECT_EQ(a.map_flags, b.map_flags);
    EXPECT_EQ(a.global_data, b.global_data);
    EXPECT_EQ(a.initial_value, b.initial_value);
  }
  ASSERT_EQ(decoded->programs.size(), 1u);
  EXPECT_EQ(decoded->programs[0].name, "on_sample");
  EXPECT_EQ(decoded->programs[0].section, "perf_event");
  EXPECT_EQ(decoded->programs[0].prog_type, static_cast<std::uint32_t>(BPF_PROG_TYPE_PERF_EVENT));
  EXPECT_TRUE(same_insns(decoded->programs[0].insns, image.programs[0].insns));
  EXPECT_TRUE(decoded->programs[0].btf_func_info);
  EXPECT_EQ(decoded->programs[0].btf_funcs, image.programs[0].btf_funcs);
  EXPECT_EQ(decoded->task_layout, image.task_layout);
  ASSERT_NE(decoded->kernel_btf, nullptr);
  EXPECT_EQ(*decoded->kernel_btf, *image.kernel_btf);
  // An image without them decodes without them.
  ObjectImage plain = sample_image();
  plain.kernel_btf = nullptr;
  auto decoded_plain = decode_object_image(encode_object_image(plain));
  ASSERT_TRUE(decoded_plain) << decoded_plain.error().message;
  EXPECT_EQ(decoded_plain->kernel_btf, nullptr);
}

// The verifier walks the kernel types by index: one outside the table, or a root that is no
// struct, is refused.
TEST(ImageCodec, KernelTypesWithBadIndexesAreRefused) {
  const auto image_with = [](void (*change)(KernelBtfTypes&)) {
    ObjectImage image = sample_image();
    KernelBtfTypes bt = sample_kernel_types();
    change(bt);
    image.kernel_btf = std::make_shared<const KernelBtfTypes>(std::move(bt));
    return encode_object_image(image);
  };
  EXPECT_FALSE(decode_object_image(image_with([](KernelBtfTypes& bt) { bt.types[3].target = 4; })));
  EXPECT_FALSE(
      decode_object_image(image_with([](KernelBtfTypes& bt) { bt.types[1].members[1].type = 9; })));
  EXPECT_FALSE(decode_object_image(image_with([](KernelBtfTypes& bt) { bt.task_struct = 2; })));
  EXPECT_TRUE(decode_object_image(encode_object_image(sample_image())));
}

// The verifier indexes instructions by a function's start: one outside the program is refused.
TEST(ImageCodec, AFunctionOutsideItsProgramIsRefused) {
  ObjectImage image = sample_image();
  image.programs[0].btf_funcs[1].start = 4;
  EXPECT_FALSE(decode_object_image(encode_object_image(image)));
}

// The runtime reads the synthetic task at the layout's offsets with the sizes it fills: a layout
// it could not fill, or a member past the task, is refused at decode.
TEST(ImageCodec, InconsistentTaskLayoutsAreRefused) {
  const auto refused = [](void (*change)(KernelTaskLayout&)) {
    ObjectImage image = sample_image();
    change(image.task_layout);
    auto decoded = decode_object_image(encode_object_image(image));
    return !decoded && decoded.error().message.find("task_struct layout") != std::string::npos;
  };
  EXPECT_TRUE(refused([](KernelTaskLayout& t) { t.pid.size = 8; }));
  EXPECT_TRUE(refused([](KernelTaskLayout& t) { t.comm.size = 32; }));
  EXPECT_TRUE(refused([](KernelTaskLayout& t) { t.thread_fsbase.offset = t.task_size - 4; }));
  EXPECT_TRUE(
      refused([](KernelTaskLayout& t) { t.task_size = KernelTaskLayout::kMaxTaskSize + 1; }));
  EXPECT_TRUE(refused([](KernelTaskLayout& t) { t.mm_arg_end.offset = t.mm_size; }));  // past mm
  EXPECT_TRUE(refused([](KernelTaskLayout& t) { t.present = false; }));  // members without a task
  EXPECT_TRUE(refused([](KernelTaskLayout& t) { t.stack = {8, 0}; }));   // absent, yet placed
  EXPECT_FALSE(refused([](KernelTaskLayout& t) { t.thread_fsbase = {}; }));  // absent: fine
  EXPECT_FALSE(refused([](KernelTaskLayout& t) { t = KernelTaskLayout{}; }));
}

TEST(ImageCodec, EveryTruncationIsRefused) {
  const std::vector<std::uint8_t> bytes = encode_object_image(sample_image());
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(size));
    auto decoded = decode_object_image(cut);
    ASSERT_FALSE(decoded) << "decoded from its first " << size << " bytes";
    EXPECT_EQ(decoded.error().code, EINVAL);
    EXPECT_NE(decoded.error().message.find("bad object image"), std::string::npos);
  }
}

TEST(ImageCodec, BytesAfterTheLastProgramAreRefused) {
  std::vector<std::uint8_t> bytes = encode_object_image(sample_image());
  bytes.push_back(0);
  EXPECT_FALSE(decode_object_image(bytes));
}

// A flipped bit may leave a valid image (a name's letter, an instruction's immediate) or not;
// either way the decoder stays within the bytes, and a count turned huge allocates nothing.
TEST(ImageCodec, BitFlipsDecodeOrAreRefusedWithinTheBytes) {
  const std::vector<std::uint8_t> bytes = encode_object_image(sample_image());
  int refused = 0;
  for (std::size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    std::vector<std::uint8_t> flipped = bytes;
    flipped[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    refused += decode_object_image(flipped) ? 0 : 1;
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace userperf::bpf
