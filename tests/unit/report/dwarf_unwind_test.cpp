// The dwarf unwinder on samples made here: this process's registers and stack, captured in a
// function of this test, written as a --call-graph dwarf sample (REGS_USER + STACK_USER) with
// MMAP2 records of this process's executable mappings. Checks the load bias of lld-linked objects,
// mappings replaced at the same address, many processes, the vdso, --max-stack 0 and FIFOs at a
// mapping's path.
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "perfdata/reader.hpp"
#include "perfdata/writer.hpp"
#include "report/dwarf_unwinder.hpp"
#include "report/process_symbols.hpp"
#include "report/profile.hpp"
#include "unit/perfdata/test_files.hpp"
#include "unit/report/record_bytes.hpp"

namespace {

// A thread's registers by perf register number (asm/perf_regs.h: ax bx cx dx si di bp sp ip
// flags cs ss ds es fs gs r8..r15) and the stack from sp, as a dwarf-mode sample carries them.
struct CapturedStack {
  std::array<std::uint64_t, 24> regs{};
  std::vector<std::uint8_t> stack;
};

constexpr std::size_t kStackBytes = 8192;  // perf's default dump size

// The stack from `sp` up to kStackBytes or the stack's end, read word by word: the copy crosses
// other frames' locals (and, in the sanitizer build, their red zones).
__attribute__((noinline, no_sanitize_address)) void copy_stack(std::uint64_t sp,
                                                               std::vector<std::uint8_t>& out) {
  pthread_attr_t attr;
  void* low = nullptr;
  std::size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  const std::uint64_t end = reinterpret_cast<std::uint64_t>(low) + size;
  const std::size_t bytes = std::min<std::uint64_t>(kStackBytes, end - sp) & ~std::size_t{7};
  out.resize(bytes);
  for (std::size_t at = 0; at < bytes; at += 8) {
    const std::uint64_t word = *reinterpret_cast<const volatile std::uint64_t*>(sp + at);
    std::memcpy(out.data() + at, &word, sizeof word);
  }
}

}  // namespace

extern "C" {
// The sampled function: its registers at the `lea` (ip = the next instruction) and its stack.
// Only the callee-saved registers, sp and ip matter to the unwinder.
__attribute__((noinline)) void unwind_test_capture(void* arg) {
  auto* out = static_cast<CapturedStack*>(arg);
  std::uint64_t* regs = out->regs.data();
  __asm__ volatile(
      "mov %%rbx, 8(%0)\n\t"
      "mov %%rbp, 48(%0)\n\t"
      "mov %%rsp, 56(%0)\n\t"
      "lea 0(%%rip), %%rax\n\t"
      "mov %%rax, 64(%0)\n\t"
      "mov %%r12, 160(%0)\n\t"
      "mov %%r13, 168(%0)\n\t"
      "mov %%r14, 176(%0)\n\t"
      "mov %%r15, 184(%0)\n\t"
      :
      : "r"(regs)
      : "rax", "memory");
  copy_stack(regs[7], out->stack);
}

__attribute__((noinline)) void unwind_test_outer(CapturedStack* out) {
  unwind_test_capture(out);
  __asm__ volatile("" ::: "memory");  // no tail call
}

using LldCallee = void (*)(void (*)(void*), void*);
__attribute__((noinline)) void unwind_test_through_lld(LldCallee callee, CapturedStack* out) {
  callee(unwind_test_capture, out);
  __asm__ volatile("" ::: "memory");  // no tail call
}
}

namespace userperf::report {
namespace {

constexpr std::uint32_t kPid = 5151;
constexpr std::uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                      PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER |
                                      PERF_SAMPLE_STACK_USER;
constexpr std::uint64_t kRegsMask = 0xff0fff;  // perf record --call-graph dwarf's

using testing::RecordBytes;

Mapping at(std::uint64_t start, std::uint64_t end, std::uint64_t pgoff, const std::string& path) {
  Mapping m;
  m.start = start;
  m.end = end;
  m.pgoff = pgoff;
  m.path = path;
  return m;
}

// This process's executable mappings of files, as perf record writes them.
std::vector<Mapping> executable_mappings() {
  std::vector<Mapping> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long start = 0, end = 0, pgoff = 0;
    char perms[8];
    char path[512] = "";
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %*s %*s %511s", &start, &end, perms, &pgoff,
                    path) == 5 &&
        perms[2] == 'x' && path[0] == '/') {
      out.push_back(at(start, end, pgoff, path));
    }
  }
  return out;
}

Mapping mapping_holding(const std::vector<Mapping>& mappings, std::uint64_t address) {
  for (const Mapping& m : mappings) {
    if (address >= m.start && address < m.end) return m;
  }
  return {};
}

std::vector<std::uint8_t> comm(std::uint32_t pid, std::uint64_t time) {
  return RecordBytes(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC)
      .put(pid)
      .put(pid)
      .text("unwound")
      .trailer(pid, time)
      .done();
}

std::vector<std::uint8_t> mmap2(std::uint32_t pid, const Mapping& m, std::uint64_t time) {
  return testing::mmap2_record(pid, m.start, m.end, m.pgoff, m.path, time);
}

std::vector<std::uint8_t> dwarf_sample(std::uint32_t pid, std::uint64_t time,
                                       const CapturedStack& captured) {
  RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  r.put(captured.regs[8]).put(pid).put(pid).put(time).put(std::uint64_t{1000});
  r.put(std::uint64_t{PERF_SAMPLE_REGS_ABI_64});
  for (int reg = 0; reg < 64; ++reg) {
    if (kRegsMask & (1ULL << reg)) r.put(captured.regs[reg]);
  }
  r.put(std::uint64_t{captured.stack.size()}).bytes(captured.stack);
  r.put(std::uint64_t{captured.stack.size()});  // dyn_size: all of it is real
  return r.done();
}

class DwarfUnwindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("userperf-unwind-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    writer_ = perfdata::testing::create_writer(dir_ + "/perf.data");
    ASSERT_TRUE(writer_);
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_type = kSampleType;
    attr.sample_regs_user = kRegsMask;
    attr.sample_stack_user = kStackBytes;
    attr.sample_id_all = 1;
    attr.exclude_callchain_user = 1;
    ASSERT_EQ(writer_->add_attr(attr, {}), 0);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void append(const std::vector<std::uint8_t>& record) {
    ASSERT_TRUE(writer_->append(record)) << writer_->error().message;
  }
  // COMM and every executable mapping of this process, as process `pid`, at `time`.
  void append_process(std::uint32_t pid, std::uint64_t time) {
    append(comm(pid, time));
    for (const Mapping& m : executable_mappings()) append(mmap2(pid, m, time));
  }

  // Each sample's user symbols, leaf first.
  std::vector<std::vector<std::string>> chains(ProfileOptions options = {},
                                               Profile* profile_out = nullptr) {
    std::vector<std::vector<std::string>> out;
    EXPECT_TRUE(writer_->finish()) << writer_->error().message;
    auto reader = perfdata::testing::open_reader(dir_ + "/perf.data");
    EXPECT_TRUE(reader);
    if (!reader) return out;
    auto on_sample = options.on_sample;
    options.on_sample = [&](const ResolvedSample& sample) {
      std::vector<std::string> symbols;
      for (LocationId location : sample.chain) {
        symbols.push_back(sample.profile.function_of(location).name);
      }
      out.push_back(symbols);
      if (on_sample) on_sample(sample);
    };
    const Expected<Profile> profile = build_profile(*reader, options);
    EXPECT_TRUE(profile) << profile.error().message;
    if (profile && profile_out != nullptr) *profile_out = *profile;
    return out;
  }

  std::string dir_;
  std::unique_ptr<perfdata::Writer> writer_;
};

bool contains(const std::vector<std::string>& chain, const std::string& symbol) {
  return std::find(chain.begin(), chain.end(), symbol) != chain.end();
}

std::string joined(const std::vector<std::string>& chain) {
  std::string out;
  for (const std::string& symbol : chain) out += (out.empty() ? "" : " <- ") + symbol;
  return out;
}

TEST_F(DwarfUnwindTest, UnwindsThisProcessToTheCaller) {
  CapturedStack captured;
  unwind_test_outer(&captured);
  ASSERT_FALSE(captured.stack.empty());
  append_process(kPid, 1);
  append(dwarf_sample(kPid, 2, captured));
  const auto found = chains();
  ASSERT_EQ(found.size(), 1u);
  ASSERT_FALSE(found[0].empty());
  EXPECT_EQ(found[0][0], "unwind_test_capture");
  EXPECT_TRUE(contains(found[0], "unwind_test_outer")) << joined(found[0]);
}

// lld places a segment one page further in memory than in the file: its mapping's file offset
// alone gives the wrong load bias, and the CFI of the wrong addresses.
TEST_F(DwarfUnwindTest, UnwindsThroughAnLldLinkedObject) {
  const std::string library = USERPERF_REPORT_LLD_LIBRARY;
  if (library.empty()) GTEST_SKIP() << "clang and ld.lld are needed to build the lld object";
  void* handle = dlopen(library.c_str(), RTLD_NOW);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto callee = reinterpret_cast<LldCallee>(dlsym(handle, "lld_callee"));
  ASSERT_NE(callee, nullptr);
  CapturedStack captured;
  unwind_test_through_lld(callee, &captured);
  append_process(kPid, 1);  // while the library is loaded
  append(dwarf_sample(kPid, 2, captured));
  const auto found = chains();
  dlclose(handle);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(contains(found[0], "lld_callee")) << joined(found[0]);
  EXPECT_TRUE(contains(found[0], "unwind_test_through_lld")) << joined(found[0]);
}

// A mapping replaced at the same address (dlclose, then dlopen of another object there): the
// unwinder must not keep the first file's module. Here the first mapping places this executable
// one page off, the second places it right.
TEST_F(DwarfUnwindTest, MappingReplacedAtTheSameAddressIsUnwoundWithTheNewFile) {
  CapturedStack captured;
  unwind_test_outer(&captured);
  const Mapping text = mapping_holding(executable_mappings(), captured.regs[8]);
  ASSERT_FALSE(text.path.empty());
  append(comm(kPid, 1));
  Mapping shifted = text;
  shifted.pgoff += 0x1000;
  append(mmap2(kPid, shifted, 1));
  append(dwarf_sample(kPid, 2, captured));
  append(mmap2(kPid, text, 3));
  append(dwarf_sample(kPid, 4, captured));
  const auto found = chains();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_TRUE(contains(found[1], "unwind_test_outer")) << joined(found[1]);
}

std::size_t open_descriptors() {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++count;
  }
  return count;
}

// Each address space's dwfl holds its files open: a file of many processes must not keep one
// per process.
TEST_F(DwarfUnwindTest, ManyProcessesDoNotKeepADescriptorEach) {
  CapturedStack captured;
  unwind_test_outer(&captured);
  constexpr std::uint32_t kProcesses = 300;
  for (std::uint32_t i = 0; i < kProcesses; ++i) {
    append_process(kPid + i, 10 * i + 1);
    append(dwarf_sample(kPid + i, 10 * i + 2, captured));
  }
  std::size_t first = 0, most = 0;
  ProfileOptions options;
  options.on_sample = [&](const ResolvedSample&) {
    const std::size_t now = open_descriptors();
    if (first == 0) first = now;
    most = std::max(most, now);
  };
  const auto found = chains(options);
  ASSERT_EQ(found.size(), kProcesses);
  for (const auto& chain : found) {
    ASSERT_TRUE(contains(chain, "unwind_test_outer")) << joined(chain);
  }
  // A few descriptors per kept session (the files of its modules, their debug files).
  EXPECT_LT(most - first, 8 * DwarfUnwinder::kMaxSessions);
}

// The vdso's address in this process of the function named `name` in its dynamic symbols; 0 when
// none.
std::uint64_t vdso_function(const char* name) {
  const auto base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return 0;
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(base);
  const auto* shdrs = reinterpret_cast<const Elf64_Shdr*>(base + ehdr->e_shoff);
  const auto* phdrs = reinterpret_cast<const Elf64_Phdr*>(base + ehdr->e_phoff);
  std::uint64_t first_vaddr = 0;
  for (int i = 0; i < ehdr->e_phnum; ++i) {
    if (phdrs[i].p_type == PT_LOAD) {
      first_vaddr = phdrs[i].p_vaddr;
      break;
    }
  }
  for (int i = 0; i < ehdr->e_shnum; ++i) {
    if (shdrs[i].sh_type != SHT_DYNSYM) continue;
    const auto* symbols = reinterpret_cast<const Elf64_Sym*>(base + shdrs[i].sh_offset);
    const char* names = reinterpret_cast<const char*>(base + shdrs[shdrs[i].sh_link].sh_offset);
    for (std::size_t s = 0; s < shdrs[i].sh_size / sizeof(Elf64_Sym); ++s) {
      if (std::strcmp(names + symbols[s].st_name, name) == 0 && symbols[s].st_value != 0) {
        return base + symbols[s].st_value - first_vaddr;
      }
    }
  }
  return 0;
}

Mapping vdso_mapping() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long start = 0, end = 0;
    if (line.find("[vdso]") != std::string::npos &&
        std::sscanf(line.c_str(), "%lx-%lx", &start, &end) == 2) {
      return at(start, end, 0, "[vdso]");
    }
  }
  return {};
}

// A sample at the entry of a vdso function called from unwind_test_capture (as cpu-clock samples
// land in clock_gettime's vdso code): the unwinder continues with the vdso's CFI.
TEST_F(DwarfUnwindTest, UnwindsFromTheVdso) {
  const std::uint64_t entry = vdso_function("__vdso_clock_gettime");
  const Mapping vdso = vdso_mapping();
  if (entry == 0 || vdso.path.empty()) GTEST_SKIP() << "no vdso with __vdso_clock_gettime here";
  CapturedStack captured;
  unwind_test_outer(&captured);
  // At a function's entry the return address is at sp: "return" to the captured ip.
  CapturedStack in_vdso = captured;
  in_vdso.regs[8] = entry;
  in_vdso.regs[7] = captured.regs[7] - 8;
  in_vdso.stack.resize(8);
  std::memcpy(in_vdso.stack.data(), &captured.regs[8], 8);
  in_vdso.stack.insert(in_vdso.stack.end(), captured.stack.begin(), captured.stack.end() - 8);
  append_process(kPid, 1);
  append(mmap2(kPid, vdso, 1));
  append(dwarf_sample(kPid, 2, in_vdso));
  const auto found = chains();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(contains(found[0], "unwind_test_capture")) << joined(found[0]);
  EXPECT_TRUE(contains(found[0], "unwind_test_outer")) << joined(found[0]);
}

// --max-stack 0: no caller frames, but the sample still counts with its leaf.
TEST_F(DwarfUnwindTest, MaxStackZeroKeepsTheLeaf) {
  CapturedStack captured;
  unwind_test_outer(&captured);
  append_process(kPid, 1);
  append(dwarf_sample(kPid, 2, captured));
  ProfileOptions options;
  options.max_frames = 0;
  Profile profile;
  const auto found = chains(options, &profile);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], std::vector<std::string>{"unwind_test_capture"});
  EXPECT_EQ(profile.dwarf_samples, 1u);
  ASSERT_EQ(profile.events.size(), 1u);
  EXPECT_FALSE(profile.stacks.empty());
}

// A FIFO at a mapping's path: opening it for reading would wait for a writer forever. The
// report (unwinder and symbols) and the script's symbols must pass it by. alarm: a hang fails
// the test instead of stalling the run.
TEST_F(DwarfUnwindTest, FifoAtAMappingsPathIsNotOpened) {
  CapturedStack captured;
  unwind_test_outer(&captured);
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Mapping text = mapping_holding(executable_mappings(), captured.regs[8]);
  ASSERT_FALSE(text.path.empty());
  text.path = fifo;
  append(comm(kPid, 1));
  append(mmap2(kPid, text, 1));
  append(dwarf_sample(kPid, 2, captured));
  ASSERT_TRUE(writer_->finish()) << writer_->error().message;
  const std::string file = dir_ + "/perf.data";
  EXPECT_EXIT(
      {
        alarm(60);
        auto reader = perfdata::Reader::open(file);
        if (!reader || !build_profile(**reader, {})) std::_Exit(2);
        ProcessSymbols symbols;
        perfdata::RecordCursor cursor = (*reader)->records();
        perfdata::RecordView record;
        while (cursor.next(record) == perfdata::RecordCursor::Next::kRecord) {
          symbols.observe(record);
        }
        symbols.describe(kPid, captured.regs[8]);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace userperf::report
