// build_profile and print_report on files made here with perfdata::Writer: records out of time
// order, symbols of this test executable, unknown addresses, lost counts, malformed samples.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "perfdata/reader.hpp"
#include "perfdata/writer.hpp"
#include "report/address_space.hpp"
#include "report/demangle.hpp"
#include "report/elf_file.hpp"
#include "report/hist.hpp"
#include "report/profile.hpp"
#include "report/report_printer.hpp"
#include "unit/perfdata/test_files.hpp"
#include "unit/report/record_bytes.hpp"

extern "C" {
// The leaf remembers where it returns to: a return address inside report_test_caller.
void* report_test_return_address = nullptr;
__attribute__((noinline)) int report_test_leaf(int x) {
  report_test_return_address = __builtin_return_address(0);
  return x * 3 + 1;
}
__attribute__((noinline)) int report_test_caller(int x) {
  const int y = report_test_leaf(x);
  __asm__ volatile("" ::: "memory");  // no tail call
  return y + 2;
}
// A function whose last instruction is a call, and the one after it: the call's return address is
// the second one's first byte (ld.so's _start and _dl_start_user). Never run.
void report_test_ends_in_a_call();
void report_test_after_a_call();
__asm__(
    ".text\n"
    ".globl report_test_ends_in_a_call\n"
    ".type report_test_ends_in_a_call, @function\n"
    "report_test_ends_in_a_call:\n"
    "  call report_test_leaf\n"
    ".size report_test_ends_in_a_call, . - report_test_ends_in_a_call\n"
    ".globl report_test_after_a_call\n"
    ".type report_test_after_a_call, @function\n"
    "report_test_after_a_call:\n"
    "  ret\n"
    ".size report_test_after_a_call, . - report_test_after_a_call\n");
}

namespace userperf::report {
namespace {

constexpr std::uint32_t kPid = 4242;
constexpr std::uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                      PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;

using testing::RecordBytes;

struct ExeMapping {
  std::uint64_t start = 0, end = 0, pgoff = 0;
  std::string path;
};

// The /proc/self/maps line mapping `address`.
ExeMapping mapping_of(const void* address) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto target = reinterpret_cast<std::uint64_t>(address);
  while (std::getline(maps, line)) {
    ExeMapping m;
    char perms[8];
    char path[512] = "";
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %*s %*s %511s", &m.start, &m.end, perms,
                    &m.pgoff, path) >= 4 &&
        target >= m.start && target < m.end) {
      m.path = path;
      return m;
    }
  }
  return {};
}

std::vector<std::uint8_t> mmap2(const ExeMapping& m, std::uint64_t time) {
  return testing::mmap2_record(kPid, m.start, m.end, m.pgoff, m.path, time);
}

std::vector<std::uint8_t> sample(std::uint64_t time, std::uint64_t period,
                                 const std::vector<std::uint64_t>& chain) {
  RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  r.put(chain.empty() ? std::uint64_t{0x10} : chain[1]).put(kPid).put(kPid).put(time).put(period);
  r.put(std::uint64_t{chain.size()});
  for (std::uint64_t entry : chain) r.put(entry);
  return r.done();
}

class ProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    report_test_caller(1);  // sets report_test_return_address
    path_ = std::filesystem::temp_directory_path() /
            ("userperf-report-" + std::to_string(getpid()) + ".data");
    writer_ = perfdata::testing::create_writer(path_);
    ASSERT_TRUE(writer_);
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_type = kSampleType;
    attr.sample_id_all = 1;
    ASSERT_EQ(writer_->add_attr(attr, {}), 0);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  void append(const std::vector<std::uint8_t>& record) {
    ASSERT_TRUE(writer_->append(record)) << writer_->error().message;
  }

  // Finishes the file the first time; later calls read it again.
  Expected<Profile> profile(const ProfileOptions& options = {}) {
    if (!finished_) {
      EXPECT_TRUE(writer_->finish()) << writer_->error().message;
      finished_ = true;
    }
    auto reader = perfdata::Reader::open(path_);
    if (!reader) return reader.error();
    return build_profile(**reader, options);
  }

  std::string path_;
  std::unique_ptr<perfdata::Writer> writer_;
  bool finished_ = false;
};

// A row of the default table (comm, dso, sym) of event 0, as its parts' names.
struct Row {
  std::string command, dso;
  std::uint64_t self = 0, children = 0;
};

std::optional<Row> row(const Profile& profile, const std::string& symbol) {
  for (const HistRow& r : build_hist(profile, 0, {})) {
    if (profile.function_of(r.location).name == symbol) {
      return Row{profile.threads[r.thread].command, profile.dso_of(r.location).name, r.self,
                 r.children};
    }
  }
  return std::nullopt;
}

TEST(AddressSpaceTest, NewMappingCutsTheOnesItOverlaps) {
  AddressSpace space(1);
  space.map({0x1000, 0x5000, 0, "/a"});
  space.map({0x2000, 0x3000, 0x9000, "/b"});
  ASSERT_NE(space.find(0x1800), nullptr);
  EXPECT_EQ(space.find(0x1800)->path, "/a");
  EXPECT_EQ(space.find(0x2800)->path, "/b");
  const Mapping* tail = space.find(0x3800);
  ASSERT_NE(tail, nullptr);
  EXPECT_EQ(tail->path, "/a");
  EXPECT_EQ(tail->start, 0x3000u);
  EXPECT_EQ(tail->pgoff, 0x2000u);  // the file offset of the address where the tail starts
  EXPECT_EQ(space.find(0x5000), nullptr);
  EXPECT_EQ(space.find(0xfff), nullptr);
}

TEST(ProcessTableTest, ExecEmptiesTheSpaceAndForkCopiesIt) {
  ProcessTable table;
  table.on_mmap(1, {0x1000, 0x2000, 0, "/old"}, PROT_READ | PROT_EXEC);
  table.on_fork(2, 1, 2, 1);
  table.on_comm(1, 1, "new", true);
  EXPECT_EQ(table.space(1).find(0x1800), nullptr);
  ASSERT_NE(table.space(2).find(0x1800), nullptr);
  EXPECT_EQ(table.command(1, 1), "new");
  EXPECT_EQ(table.command(7, 7), ":7");
  EXPECT_EQ(table.command(0, 0), "swapper");  // the idle task of a system-wide file, as perf
}

TEST_F(ProfileTest, SamplesResolveAgainstMappingsRecordedLaterInTheFileButEarlierInTime) {
  const ExeMapping exe = mapping_of(reinterpret_cast<void*>(&report_test_leaf));
  ASSERT_FALSE(exe.path.empty());
  const auto leaf = reinterpret_cast<std::uint64_t>(&report_test_leaf) + 1;
  const auto ret = reinterpret_cast<std::uint64_t>(report_test_return_address);
  const std::uint64_t user = PERF_CONTEXT_USER;
  append(sample(20, 300, {user, leaf, ret}));  // before its MMAP2 in the file
  append(RecordBytes(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC)
             .put(kPid)
             .put(kPid)
             .text("synthetic")
             .trailer(kPid, 5)
             .done());
  append(mmap2(exe, 10));
  append(sample(30, 100, {user, 0x10}));  // no mapping there
  append(RecordBytes(PERF_RECORD_LOST)
             .put(std::uint64_t{0})
             .put(std::uint64_t{7})
             .trailer(kPid, 40)
             .done());
  // The recorder's end-of-run total of the event's losses (the LOST record's 7 among them).
  append(RecordBytes(PERF_RECORD_LOST_SAMPLES).put(std::uint64_t{9}).trailer(kPid, 50).done());

  const Expected<Profile> built = this->profile();
  ASSERT_TRUE(built) << built.error().message;
  const Profile& profile = *built;
  ASSERT_EQ(profile.events.size(), 1u);
  const EventProfile& event = profile.events[0];
  // No EVENT_DESC: perf's name, whose modifiers say the attr excludes neither host nor guest.
  EXPECT_EQ(event.name, "cpu-clock:HG");
  EXPECT_EQ(event.samples, 2u);
  EXPECT_EQ(event.total_period, 400u);
  // perf's counts: the total is the LOST_SAMPLES records', the LOST records are "lost chunks".
  EXPECT_EQ(profile.lost_samples, 9u);
  EXPECT_EQ(profile.lost_records, 1u);
  EXPECT_EQ(profile.lost_in_records, 7u);

  const auto leaf_row = row(profile, "report_test_leaf");
  const auto caller_row = row(profile, "report_test_caller");
  const auto unknown_row = row(profile, "[unknown]");
  ASSERT_TRUE(leaf_row);
  ASSERT_TRUE(caller_row);
  ASSERT_TRUE(unknown_row);
  EXPECT_EQ(leaf_row->command, "synthetic");
  EXPECT_EQ(leaf_row->dso, std::filesystem::path(exe.path).filename().string());
  EXPECT_EQ(leaf_row->self, 300u);
  EXPECT_EQ(leaf_row->children, 300u);
  EXPECT_EQ(caller_row->self, 0u);
  EXPECT_EQ(caller_row->children, 300u);
  EXPECT_EQ(unknown_row->dso, "[unknown]");
  EXPECT_EQ(unknown_row->self, 100u);

  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  ReportOptions options;
  options.children = true;
  print_report(profile, options, out);
  std::fclose(out);
  const std::string report(text, size);
  std::free(text);
  EXPECT_NE(report.find("# Total Lost Samples: 9\n# Lost chunks: 1 LOST records, 7 samples\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("# Samples: 2  of event 'cpu-clock:HG'\n"), std::string::npos) << report;
  // The address no mapping covers is named by itself, as perf names it.
  EXPECT_NE(report.find("[unknown]         [.] 0x0000000000000010\n"), std::string::npos) << report;
  EXPECT_NE(report.find("# Event count (approx.): 400\n"), std::string::npos) << report;
  EXPECT_NE(report.find("   75.00%     0.00%  synthetic"), std::string::npos) << report;
  EXPECT_NE(report.find("[.] report_test_caller\n"), std::string::npos) << report;
}

// --max-stack N keeps N frames of a chain, and the leaf even when N is 0 (as perf does).
TEST_F(ProfileTest, MaxStackCutsTheChainButKeepsTheLeaf) {
  const ExeMapping exe = mapping_of(reinterpret_cast<void*>(&report_test_leaf));
  ASSERT_FALSE(exe.path.empty());
  const auto leaf = reinterpret_cast<std::uint64_t>(&report_test_leaf) + 1;
  const auto ret = reinterpret_cast<std::uint64_t>(report_test_return_address);
  append(mmap2(exe, 1));
  append(sample(2, 100, {PERF_CONTEXT_USER, leaf, ret}));
  for (const std::size_t max_frames : {0, 1}) {
    SCOPED_TRACE(max_frames);
    ProfileOptions options;
    options.max_frames = max_frames;
    const Expected<Profile> built = this->profile(options);
    ASSERT_TRUE(built) << built.error().message;
    const Profile& profile = *built;
    const EventProfile& event = profile.events.at(0);
    EXPECT_EQ(event.samples, 1u);
    const auto leaf_row = row(profile, "report_test_leaf");
    ASSERT_TRUE(leaf_row);
    EXPECT_EQ(leaf_row->self, 100u);
    EXPECT_EQ(leaf_row->children, 100u);
    EXPECT_FALSE(row(profile, "report_test_caller"));
  }
}

// A return address is looked up as recorded, as perf does: one that is the next function's first
// byte names that function, not the caller whose last instruction the call was.
TEST_F(ProfileTest, ReturnAddressAtTheNextFunctionsStartNamesThatFunction) {
  const ExeMapping exe = mapping_of(reinterpret_cast<void*>(&report_test_leaf));
  ASSERT_FALSE(exe.path.empty());
  const auto leaf = reinterpret_cast<std::uint64_t>(&report_test_leaf) + 1;
  const auto ret = reinterpret_cast<std::uint64_t>(&report_test_after_a_call);
  append(mmap2(exe, 1));
  append(sample(2, 100, {PERF_CONTEXT_USER, leaf, ret}));
  const Expected<Profile> built = this->profile();
  ASSERT_TRUE(built) << built.error().message;
  const auto after = row(*built, "report_test_after_a_call");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->children, 100u);
  EXPECT_EQ(after->self, 0u);
  EXPECT_FALSE(row(*built, "report_test_ends_in_a_call"));
}

TEST_F(ProfileTest, MalformedSampleIsAnErrorNamingItsOffset) {
  auto bytes = sample(20, 1, {PERF_CONTEXT_USER, 0x10});
  const std::uint64_t huge = 1u << 20;  // callchain nr far past the record
  std::memcpy(bytes.data() + 8 + 32, &huge, sizeof huge);
  append(bytes);
  const Expected<Profile> built = this->profile();
  ASSERT_FALSE(built);
  EXPECT_EQ(built.error().code, EINVAL);
  EXPECT_TRUE(built.error().has_offset());
  EXPECT_NE(built.error().message.find("offset"), std::string::npos) << built.error().message;
}

TEST_F(ProfileTest, FileWithoutSamplesSaysSo) {
  append(mmap2({0x1000, 0x2000, 0, "/nonexistent"}, 1));
  const Expected<Profile> built = this->profile();
  ASSERT_TRUE(built) << built.error().message;
  const Profile& profile = *built;
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  print_report(profile, ReportOptions{}, out);
  std::fclose(out);
  EXPECT_EQ(std::string(text, size), "# No samples.\n");
  std::free(text);
}

}  // namespace
}  // namespace userperf::report

namespace userperf::report {
namespace {

std::vector<std::uint8_t> sample_of(std::uint32_t pid, std::uint64_t time, std::uint64_t period,
                                    const std::vector<std::uint64_t>& chain) {
  RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  r.put(chain[1]).put(pid).put(pid).put(time).put(period);
  r.put(std::uint64_t{chain.size()});
  for (std::uint64_t entry : chain) r.put(entry);
  return r.done();
}

// Identical samples are one Stack; the same file mapped at different addresses by two processes
// gives one Location per file offset (symbolized once), and the two threads stay apart.
TEST_F(ProfileTest, SamplesMergeAndLocationsAreSharedAcrossProcesses) {
  const ExeMapping exe = mapping_of(reinterpret_cast<void*>(&report_test_leaf));
  ASSERT_FALSE(exe.path.empty());
  const auto leaf = reinterpret_cast<std::uint64_t>(&report_test_leaf) + 1;
  const auto ret = reinterpret_cast<std::uint64_t>(report_test_return_address);
  constexpr std::uint32_t kOther = kPid + 1;
  constexpr std::uint64_t kShift = 0x100000000ULL;
  append(mmap2(exe, 1));
  append(
      testing::mmap2_record(kOther, exe.start + kShift, exe.end + kShift, exe.pgoff, exe.path, 1));
  const std::uint64_t user = PERF_CONTEXT_USER;
  append(sample_of(kPid, 2, 10, {user, leaf, ret}));
  append(sample_of(kPid, 3, 20, {user, leaf, ret}));
  append(sample_of(kOther, 4, 40, {user, leaf + kShift, ret + kShift}));
  const Expected<Profile> built = this->profile();
  ASSERT_TRUE(built) << built.error().message;
  const Profile& profile = *built;
  ASSERT_EQ(profile.stacks.size(), 2u);
  EXPECT_EQ(profile.stacks[0].samples, 2u);
  EXPECT_EQ(profile.stacks[0].period, 30u);
  EXPECT_EQ(profile.stacks[1].samples, 1u);
  EXPECT_NE(profile.stacks[0].thread, profile.stacks[1].thread);
  EXPECT_EQ(profile.locations.size(), 2u);  // the leaf and the return address, once each
  EXPECT_TRUE(std::equal(profile.frames_of(profile.stacks[0]).begin(),
                         profile.frames_of(profile.stacks[0]).end(),
                         profile.frames_of(profile.stacks[1]).begin()));
  EXPECT_EQ(profile.function_of(profile.frames[profile.stacks[0].first]).name, "report_test_leaf");
  EXPECT_EQ(profile.dso_of(profile.frames[0]).path, exe.path);
}

// Addresses no symbol names stay apart per shared object (perf's "[unknown]" of each dso), and an
// address no mapping covers is the "[unknown]" dso's.
TEST_F(ProfileTest, UnknownSymbolsStayPerSharedObject) {
  append(testing::mmap2_record(kPid, 0x10000, 0x20000, 0, "/nonexistent/libfoo.so", 1));
  append(testing::mmap2_record(kPid, 0x20000, 0x30000, 0, "/nonexistent/libbar.so", 1));
  const std::uint64_t user = PERF_CONTEXT_USER;
  append(sample_of(kPid, 2, 10, {user, 0x10100}));
  append(sample_of(kPid, 3, 20, {user, 0x20100}));
  append(sample_of(kPid, 4, 40, {user, 0x90100}));
  const Expected<Profile> built = this->profile();
  ASSERT_TRUE(built) << built.error().message;
  const Profile& profile = *built;
  std::map<std::string, std::uint64_t> self;  // dso name -> self period of its [unknown]
  for (const HistRow& r : build_hist(profile, 0, {})) {
    EXPECT_EQ(profile.function_of(r.location).name, "[unknown]");
    self[profile.dso_of(r.location).name] += r.self;
  }
  const std::map<std::string, std::uint64_t> expected{
      {"libfoo.so", 10}, {"libbar.so", 20}, {"[unknown]", 40}};
  EXPECT_EQ(self, expected);
}

TEST(DemangleTest, NamesAsPerfShowsThemWithoutParameters) {
  EXPECT_EQ(demangle_without_parameters("_Z9fold_stmtP20gimple_stmt_iterator"), "fold_stmt");
  EXPECT_EQ(demangle_without_parameters("_ZNK9text_info12get_locationEj"),
            "text_info::get_location");
  EXPECT_EQ(demangle_without_parameters("_ZN1AclEi"), "A::operator()");
  EXPECT_EQ(demangle_without_parameters("_Z3minIiET_S0_S0_"), "min<int>");
  EXPECT_EQ(demangle_without_parameters("main"), "main");
  EXPECT_EQ(demangle_without_parameters("_ZN12_GLOBAL__N_13fooEv"), "(anonymous namespace)::foo");
}

// PLT stubs have no symbols; they are named "function@plt" from .rela.plt, as perf names them.
TEST(ElfFileTest, PltStubsAreNamedAfterTheirFunction) {
  const char* path = USERPERF_REPORT_WORKLOAD_DIR "/workload_fp";
  const auto elf = ElfFile::open(path);
  ASSERT_TRUE(elf->loaded());
  FILE* readelf = popen((std::string("readelf -SW ") + path + " | grep ' .plt '").c_str(), "r");
  ASSERT_NE(readelf, nullptr);
  char line[256] = "";
  const bool found = std::fgets(line, sizeof line, readelf) != nullptr;
  pclose(readelf);
  if (!found) GTEST_SKIP() << "no .plt in " << path << " (readelf missing?)";
  unsigned long long plt = 0;
  ASSERT_EQ(std::sscanf(std::strstr(line, ".plt"), ".plt PROGBITS %llx", &plt), 1) << line;
  // Stub 0 follows the resolver entry; whichever function it is, its name ends in @plt.
  const std::string name = elf->function_at(plt + 16 + 4);
  EXPECT_TRUE(name.ends_with("@plt")) << name;
}

// A file's symbol table is made once per process (ElfFile's cache), under the file's identity: the
// same path rewritten in place with another program (the same inode, new size and times) names
// that program's functions, and a file is named alike through any ElfFile.
TEST(ElfFileTest, AFileRewrittenInPlaceIsReadAgain) {
  const std::string fp = USERPERF_REPORT_WORKLOAD_DIR "/workload_fp";
  const std::string dwarf = USERPERF_REPORT_WORKLOAD_DIR "/workload_dwarf";
  // Every function covering a 4-byte step of the first 64 KiB of link-time addresses, with its
  // offset: the two programs' code is laid out differently (frame pointers or not).
  const auto functions = [](const std::string& path) {
    const auto elf = ElfFile::open(path);
    std::string all;
    for (std::uint64_t vaddr = 0; vaddr < 0x10000; vaddr += 4) {
      std::uint64_t offset = 0;
      const std::string name = elf->function_at(vaddr, &offset);
      if (!name.empty()) all += name + "+" + std::to_string(offset) + "\n";
    }
    return all;
  };
  const std::string of_fp = functions(fp), of_dwarf = functions(dwarf);
  ASSERT_NE(of_fp.find("\nmain+"), std::string::npos) << of_fp;
  ASSERT_NE(of_fp, of_dwarf);
  EXPECT_EQ(functions(fp), of_fp);

  const std::filesystem::path copy = std::filesystem::temp_directory_path() /
                                     ("userperf-elf-rewritten-" + std::to_string(getpid()));
  std::filesystem::copy_file(fp, copy, std::filesystem::copy_options::overwrite_existing);
  EXPECT_EQ(functions(copy), of_fp);
  const auto inode = [&] {
    struct stat st {};
    EXPECT_EQ(stat(copy.c_str(), &st), 0);
    return st.st_ino;
  };
  const ino_t before = inode();
  // copy_file truncates and writes the file it finds; its times move on (a second past, in case
  // the clock's tick has not).
  std::filesystem::copy_file(dwarf, copy, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::last_write_time(
      copy, std::filesystem::last_write_time(copy) + std::chrono::seconds(1));
  EXPECT_EQ(inode(), before);
  EXPECT_EQ(functions(copy), of_dwarf);
  std::filesystem::remove(copy);
}

// perf report's names of attrs without EVENT_DESC (each checked against perf 6.1 on a file that
// differs only in these bits).
TEST(EventName, CarriesPerfsModifiers) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  EXPECT_EQ(event_name(attr), "cpu-clock:HG");
  attr.exclude_kernel = 1;
  EXPECT_EQ(event_name(attr), "cpu-clock:uh");
  attr.exclude_kernel = 0;
  attr.exclude_guest = 1;
  EXPECT_EQ(event_name(attr), "cpu-clock");
  attr.exclude_guest = 0;
  attr.precise_ip = 3;
  EXPECT_EQ(event_name(attr), "cpu-clock:ppp");
  attr.precise_ip = 0;
  attr.exclude_user = attr.exclude_hv = 1;
  EXPECT_EQ(event_name(attr), "cpu-clock:k");
  attr.exclude_user = attr.exclude_hv = 0;
  attr.exclude_host = 1;
  EXPECT_EQ(event_name(attr), "cpu-clock:G");
  attr.type = 42;
  EXPECT_EQ(event_name(attr), "42/0/");
}

}  // namespace
}  // namespace userperf::report
