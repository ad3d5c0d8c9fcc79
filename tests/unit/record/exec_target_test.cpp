// check_exec_file: what the agent can enter, read from the start of the file (one read for the ELF
// header, its program headers and a "#!" line; further reads only for program headers beyond it).
#include "record/exec_target.hpp"

#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace userperf::record {
namespace {

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/userperf-exec-target-XXXXXX";
    path_ = mkdtemp(templ) != nullptr ? templ : "";
  }
  ~TempDir() {
    for (const std::string& f : files_) unlink(f.c_str());
    rmdir(path_.c_str());
  }
  std::string write(const std::string& name, const std::vector<unsigned char>& bytes,
                    mode_t mode = 0755) {
    const std::string file = path_ + "/" + name;
    const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    fchmod(fd, mode);
    close(fd);
    files_.push_back(file);
    return file;
  }
  std::string write_text(const std::string& name, const std::string& text) {
    return write(name, std::vector<unsigned char>(text.begin(), text.end()));
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

// A minimal ELF64 header with `phnum` program headers at `phoff`, the last of type `last_type`,
// padded so the file is `size` bytes.
std::vector<unsigned char> elf64(std::size_t phoff, int phnum, std::uint32_t last_type,
                                 std::size_t size) {
  std::vector<unsigned char> bytes(std::max(size, phoff + phnum * sizeof(Elf64_Phdr)));
  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_phoff = phoff;
  header.e_phnum = static_cast<Elf64_Half>(phnum);
  header.e_phentsize = sizeof(Elf64_Phdr);
  std::memcpy(bytes.data(), &header, sizeof header);
  for (int i = 0; i < phnum; ++i) {
    Elf64_Phdr ph{};
    ph.p_type = i + 1 == phnum ? last_type : PT_LOAD;
    std::memcpy(bytes.data() + phoff + i * sizeof ph, &ph, sizeof ph);
  }
  return bytes;
}

ExecTarget check(const std::string& path) {
  return check_exec_file(path.c_str(), geteuid(), getegid());
}

TEST(ExecTarget, DynamicAndStaticElves) {
  EXPECT_EQ(check("/bin/true"), ExecTarget::kEnterable);
  TempDir dir;
  EXPECT_EQ(check(dir.write("dynamic", elf64(64, 3, PT_INTERP, 512))), ExecTarget::kEnterable);
  EXPECT_EQ(check(dir.write("static", elf64(64, 3, PT_NOTE, 512))), ExecTarget::kStatic);
  // Program headers past the first 4 KiB are read where they are.
  EXPECT_EQ(check(dir.write("far_dynamic", elf64(8192, 2, PT_INTERP, 0))), ExecTarget::kEnterable);
  EXPECT_EQ(check(dir.write("far_static", elf64(8192, 2, PT_NOTE, 0))), ExecTarget::kStatic);
  // Headers that point past the end: not readable as an ELF, so the exec decides.
  EXPECT_EQ(check(dir.write("cut", elf64(64, 40, PT_NOTE, 0), 0755)), ExecTarget::kStatic)
      << "every program header is there: none is PT_INTERP";
  std::vector<unsigned char> cut = elf64(64, 40, PT_NOTE, 0);
  cut.resize(64 + 10 * sizeof(Elf64_Phdr));
  EXPECT_EQ(check(dir.write("truncated", cut)), ExecTarget::kEnterable);
}

TEST(ExecTarget, ScriptsAreJudgedByTheirInterpreter) {
  TempDir dir;
  EXPECT_EQ(check(dir.write_text("sh_script", "#!/bin/sh\necho hi\n")), ExecTarget::kEnterable);
  const std::string interp = dir.write("static_interp", elf64(64, 2, PT_NOTE, 256));
  EXPECT_EQ(check(dir.write_text("static_script", "#! " + interp + " -x\n")), ExecTarget::kStatic);
  EXPECT_EQ(check(dir.write_text("not_a_script", "echo hi\n")), ExecTarget::kEnterable)
      << "no ELF, no #!: the exec decides";
}

TEST(ExecTarget, WhatCannotBeReadIsUnknown) {
  TempDir dir;
  EXPECT_EQ(check(dir.path()), ExecTarget::kUnknown);
  EXPECT_EQ(check(dir.path() + "/missing"), ExecTarget::kUnknown);
}

TEST(ExecTarget, SetuidToAnotherUserIsSecure) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the file to another user";
  TempDir dir;
  const std::string file = dir.write("setuid", elf64(64, 2, PT_INTERP, 256));
  ASSERT_EQ(chown(file.c_str(), 65534, 65534), 0);
  ASSERT_EQ(chmod(file.c_str(), 04755), 0);
  EXPECT_EQ(check(file), ExecTarget::kSecure);
}

}  // namespace
}  // namespace userperf::record
