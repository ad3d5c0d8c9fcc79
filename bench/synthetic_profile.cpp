// Writes a perf.data file of a chosen size for report benchmarks: SAMPLES cpu-clock samples with
// frame-pointer call chains, spread over PROCESSES processes and STACKS distinct stacks, whose
// frames are addresses in the code of real shared objects of this machine (so that perf report and
// userperf report both have symbols to look up). Stack popularity is skewed (a few stacks take most
// samples, as in real profiles); each process maps the objects at its own addresses.
// Usage: synthetic_profile OUT.data [SAMPLES 1000000] [STACKS 100000] [PROCESSES 40]
#include <elf.h>
#include <linux/perf_event.h>
#include <sys/mman.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "perfdata/writer.hpp"
#include "unit/report/record_bytes.hpp"

namespace {

using userperf::report::testing::RecordBytes;
using userperf::report::testing::user_callchain_attr;
using userperf::report::testing::user_callchain_sample;

struct Object {
  std::string path;
  std::uint64_t text_offset = 0, text_size = 0;  // the executable PT_LOAD, file offsets
  std::uint64_t text_vaddr = 0;
};

// The executable segment of an ELF file, read from its program headers.
bool load_object(const std::string& path, Object& out) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr ehdr;
  if (!in.read(reinterpret_cast<char*>(&ehdr), sizeof ehdr) ||
      ehdr.e_ident[EI_CLASS] != ELFCLASS64) {
    return false;
  }
  for (int i = 0; i < ehdr.e_phnum; ++i) {
    Elf64_Phdr phdr;
    in.seekg(static_cast<std::streamoff>(ehdr.e_phoff + i * sizeof phdr));
    if (!in.read(reinterpret_cast<char*>(&phdr), sizeof phdr)) return false;
    if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X) && phdr.p_filesz > 4096) {
      out = {path, phdr.p_offset, phdr.p_filesz, phdr.p_vaddr};
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.data [SAMPLES] [STACKS] [PROCESSES]\n", argv[0]);
    return 2;
  }
  const std::uint64_t samples = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 1000000;
  const std::uint64_t stack_count = argc > 3 ? std::strtoull(argv[3], nullptr, 0) : 100000;
  const std::uint32_t processes = argc > 4 ? static_cast<std::uint32_t>(std::atoi(argv[4])) : 40;
  std::vector<Object> objects;
  for (const char* path :
       {"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
        "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0",
        "/usr/bin/perf"}) {
    Object object;
    if (load_object(path, object)) objects.push_back(object);
  }
  if (objects.empty()) {
    std::fprintf(stderr, "synthetic_profile: none of the shared objects it uses is here\n");
    return 1;
  }
  auto writer = userperf::perfdata::Writer::create(argv[1]);
  if (!writer) {
    std::fprintf(stderr, "synthetic_profile: %s\n", writer.error().message.c_str());
    return 1;
  }
  const perf_event_attr attr = user_callchain_attr(1000000);
  (*writer)->add_attr(attr, {});
  const auto append = [&](const std::vector<std::uint8_t>& record) {
    if (!(*writer)->append(record)) {
      std::fprintf(stderr, "synthetic_profile: %s\n", (*writer)->error().message.c_str());
      std::exit(1);
    }
  };

  // Process p maps object o at base(p, o); the text's file offset keeps its page alignment.
  constexpr std::uint32_t kFirstPid = 10000;
  const auto base = [](std::uint32_t p, std::size_t o) {
    return 0x7f0000000000ULL + (std::uint64_t{p} << 32) + (std::uint64_t{o} << 28);
  };
  std::uint64_t time = 1;
  for (std::uint32_t p = 0; p < processes; ++p) {
    const std::uint32_t pid = kFirstPid + p;
    append(RecordBytes(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC)
               .put(pid)
               .put(pid)
               .text("worker" + std::to_string(p % 8))
               .trailer(pid, time++)
               .done());
    for (std::size_t o = 0; o < objects.size(); ++o) {
      const Object& object = objects[o];
      const std::uint64_t page_offset = object.text_offset & ~std::uint64_t{4095};
      RecordBytes mmap(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
      mmap.put(pid)
          .put(pid)
          .put(base(p, o))
          .put(object.text_offset + object.text_size - page_offset)
          .put(page_offset);
      mmap.put(std::uint32_t{0}).put(std::uint32_t{0}).put(std::uint64_t{0}).put(std::uint64_t{0});
      mmap.put(std::uint32_t{PROT_READ | PROT_EXEC}).put(std::uint32_t{MAP_PRIVATE});
      append(mmap.text(object.path).trailer(pid, time++).done());
    }
  }

  // Distinct stacks: frames as (object, offset into its text), outermost last.
  std::mt19937_64 random(42);
  struct Frame {
    std::uint32_t object;
    std::uint64_t offset;
  };
  std::vector<std::vector<Frame>> stacks(stack_count);
  // Stacks share prefixes as real ones do: each extends an earlier one's outer frames.
  for (std::uint64_t s = 0; s < stack_count; ++s) {
    std::vector<Frame>& stack = stacks[s];
    if (s > 0 && random() % 4 != 0) {
      const std::vector<Frame>& parent = stacks[random() % s];
      const std::size_t keep = parent.size() / 2 + random() % (parent.size() / 2 + 1);
      stack.assign(parent.end() - static_cast<std::ptrdiff_t>(keep), parent.end());
    }
    const std::size_t depth = 6 + random() % 30;
    while (stack.size() < depth) {
      const auto o = static_cast<std::uint32_t>(random() % objects.size());
      stack.insert(stack.begin(), Frame{o, random() % objects[o].text_size});
    }
  }
  // Zipf-like popularity: stack rank r gets weight 1 / (r + 10).
  std::vector<double> weights(stack_count);
  for (std::uint64_t s = 0; s < stack_count; ++s) weights[s] = 1.0 / static_cast<double>(s + 10);
  std::discrete_distribution<std::uint64_t> pick(weights.begin(), weights.end());
  for (std::uint64_t i = 0; i < samples; ++i) {
    const std::vector<Frame>& stack = stacks[pick(random)];
    const std::uint32_t p = static_cast<std::uint32_t>(random() % processes);
    const std::uint32_t pid = kFirstPid + p;
    std::vector<std::uint64_t> frames;
    for (const Frame& frame : stack) {
      const Object& object = objects[frame.object];
      const std::uint64_t page_offset = object.text_offset & ~std::uint64_t{4095};
      frames.push_back(base(p, frame.object) + object.text_offset - page_offset + frame.offset);
    }
    append(user_callchain_sample(pid, time++, attr.sample_period, frames));
  }
  if (!(*writer)->finish()) {
    std::fprintf(stderr, "synthetic_profile: %s\n", (*writer)->error().message.c_str());
    return 1;
  }
  std::printf("%s: %llu samples, %llu stacks, %u processes, %zu shared objects\n", argv[1],
              static_cast<unsigned long long>(samples),
              static_cast<unsigned long long>(stack_count), processes, objects.size());
  return 0;
}
