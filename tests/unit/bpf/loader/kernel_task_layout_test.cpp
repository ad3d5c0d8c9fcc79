// The task_struct layout of bpf_get_current_task's synthetic task, read from the running kernel's
// BTF (bpf/loader/kernel_task_layout.hpp), compared with a plain walk of task_struct's direct
// members through libbpf; and the loader puts it in an image exactly when a program calls the
// helper.
#include "bpf/loader/kernel_task_layout.hpp"

#include <bpf/btf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "bpf/loader/elf_loader.hpp"
#include "unit/bpf/loader/fixture_objects.hpp"

namespace userperf::bpf {
namespace {

bool kernel_has_btf() {
  return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

// A direct member of struct `owner` by name: its byte offset and size, read plainly from the BTF.
KernelField direct_member(const ::btf* b, const char* owner, const char* name) {
  const int id = btf__find_by_name_kind(b, owner, BTF_KIND_STRUCT);
  const btf_type* t = btf__type_by_id(b, static_cast<std::uint32_t>(id));
  for (std::uint32_t i = 0; t != nullptr && i < btf_vlen(t); ++i) {
    const btf_member& m = btf_members(t)[i];
    if (std::strcmp(btf__name_by_offset(b, m.name_off), name) == 0) {
      return KernelField{btf_member_bit_offset(t, i) / 8,
                         static_cast<std::uint32_t>(btf__resolve_size(b, m.type))};
    }
  }
  return KernelField{};
}

TEST(KernelTaskLayout, MembersAreWhereTheKernelsBtfPutsThem) {
  if (!kernel_has_btf()) GTEST_SKIP() << "the kernel has no BTF (/sys/kernel/btf/vmlinux)";
  auto kernel = loader::BtfHandle::kernel();
  ASSERT_TRUE(kernel) << kernel.error().message;
  auto layout = loader::read_kernel_task_layout(**kernel);
  ASSERT_TRUE(layout) << layout.error().message;
  EXPECT_TRUE(layout->present);
  EXPECT_TRUE(layout->consistent());
  const ::btf* b = (*kernel)->get();
  const int task = btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT);
  EXPECT_EQ(layout->task_size, btf__resolve_size(b, static_cast<std::uint32_t>(task)));
  EXPECT_EQ(layout->pid, direct_member(b, "task_struct", "pid"));
  EXPECT_EQ(layout->tgid, direct_member(b, "task_struct", "tgid"));
  EXPECT_EQ(layout->comm, direct_member(b, "task_struct", "comm"));
  EXPECT_EQ(layout->real_parent, direct_member(b, "task_struct", "real_parent"));
  EXPECT_EQ(layout->group_leader, direct_member(b, "task_struct", "group_leader"));
  EXPECT_EQ(layout->stack, direct_member(b, "task_struct", "stack"));
  const KernelField thread = direct_member(b, "task_struct", "thread");
  const KernelField fsbase = direct_member(b, "thread_struct", "fsbase");
  EXPECT_EQ(layout->thread_fsbase, (KernelField{thread.offset + fsbase.offset, fsbase.size}));
  EXPECT_EQ(layout->mm, direct_member(b, "task_struct", "mm"));
  const int mm = btf__find_by_name_kind(b, "mm_struct", BTF_KIND_STRUCT);
  EXPECT_EQ(layout->mm_size, btf__resolve_size(b, static_cast<std::uint32_t>(mm)));
  // mm_struct's members sit in an anonymous struct (its __randomize_layout part) on 6.x.
  EXPECT_EQ(layout->mm_start_stack.size, 8u);
  EXPECT_EQ(layout->mm_arg_end.offset, layout->mm_arg_start.offset + 8);
  // Sizes the synthetic task fills; each member found.
  EXPECT_EQ(layout->pid.size, 4u);
  EXPECT_EQ(layout->comm.size, 16u);
  EXPECT_EQ(layout->thread_fsbase.size, 8u);
  std::printf("task_struct: %u bytes, pid at %u, comm at %u, thread.fsbase at %u\n",
              layout->task_size, layout->pid.offset, layout->comm.offset,
              layout->thread_fsbase.offset);
}

TEST(KernelTaskLayout, TheLoaderReadsItOnlyForProgramsCallingGetCurrentTask) {
  if (!kernel_has_btf()) GTEST_SKIP() << "the kernel has no BTF (/sys/kernel/btf/vmlinux)";
  auto caller = load_elf_file(testing::fixture_path("current_task"));
  ASSERT_TRUE(caller) << caller.error().message;
  EXPECT_TRUE(caller->task_layout.present);
  EXPECT_GT(caller->task_layout.pid.size, 0u);
  auto other = load_elf_file(testing::fixture_path("core_kernel"));
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_FALSE(other->task_layout.present);
}

}  // namespace
}  // namespace userperf::bpf
