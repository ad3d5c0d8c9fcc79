// CO-RE relocations (.BTF.ext) are not applied by userperf, so an object that has any is refused,
// naming the program, the instruction and the relocation, instead of running clang's placeholder.
#include <elf.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "bpf/loader/elf_loader.hpp"
#include "unit/bpf/loader/fixture_objects.hpp"

namespace userperf::bpf {
namespace {

using testing::fixture_path;
using testing::read_fixture;

TEST(CoreRelocations, ObjectUsingBpfCoreReadIsRefused) {
  // core_read.bpf.c: read_pid's instruction 0 is `r2 = 0`, clang's placeholder for the offset of
  // task_struct's pid (0 in the program's own declaration; the kernel's is elsewhere).
  const auto image = load_elf_file(fixture_path("core_read"));
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().code, EOPNOTSUPP);
  const std::string& message = image.error().message;
  EXPECT_NE(message.find("program 'read_pid' (section 'perf_event') instruction 0: CO-RE "
                         "relocation 'byte_off' (field byte offset) of struct task_struct, "
                         "access 0:0"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("(2 CO-RE relocation(s) in it)"), std::string::npos) << message;
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

}  // namespace
}  // namespace userperf::bpf
