// Bad input: clear errors naming what is wrong (and, for relocations, the section and offset),
// never a crash or an out-of-bounds access — also for thousands of truncated and bit-flipped
// copies of the fixtures (run under ASan+UBSan in the sanitizer build).
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "bpf/loader/elf_loader.hpp"
#include "unit/bpf/loader/fixture_objects.hpp"

namespace userperf::bpf {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes fixture(const std::string& name) {
  Bytes bytes = testing::read_fixture(name);
  EXPECT_GT(bytes.size(), sizeof(Elf64_Ehdr)) << name;
  return bytes;
}

// The error of a load that must fail.
Error load_error(const Bytes& bytes, const std::string& name = "input.bpf.o") {
  auto image = load_elf_memory(bytes, name);
  EXPECT_FALSE(image.ok()) << "loaded";
  return image.ok() ? Error{} : image.error();
}

template <class T>
T get(const Bytes& bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

template <class T>
void put(Bytes& bytes, std::size_t offset, const T& value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

// The file offset of a section's header, found by name (the fixtures are well formed).
std::size_t section_header(const Bytes& bytes, const std::string& name) {
  const auto ehdr = get<Elf64_Ehdr>(bytes, 0);
  const auto names = get<Elf64_Shdr>(bytes, ehdr.e_shoff + ehdr.e_shstrndx * sizeof(Elf64_Shdr));
  for (std::size_t i = 0; i < ehdr.e_shnum; ++i) {
    const std::size_t at = ehdr.e_shoff + i * sizeof(Elf64_Shdr);
    const auto shdr = get<Elf64_Shdr>(bytes, at);
    if (name == reinterpret_cast<const char*>(bytes.data() + names.sh_offset + shdr.sh_name)) {
      return at;
    }
  }
  ADD_FAILURE() << "no section " << name;
  return 0;
}

// The file offset of relocation `index` of a REL section.
std::size_t relocation_at(const Bytes& bytes, const std::string& rel_section, std::size_t index) {
  return get<Elf64_Shdr>(bytes, section_header(bytes, rel_section)).sh_offset +
         index * sizeof(Elf64_Rel);
}

void expect_message(const Error& error, const std::string& part) {
  EXPECT_NE(error.message.find(part), std::string::npos) << error.message;
}

TEST(LoaderMalformed, NotElf) {
  const std::string text = "#!/bin/sh\necho this is not an object\n";
  const Error error = load_error(Bytes(text.begin(), text.end()), "script.o");
  EXPECT_EQ(error.code, EINVAL);
  expect_message(error, "script.o: not an ELF file");
  expect_message(load_error(Bytes{}), "not an ELF file");
}

TEST(LoaderMalformed, MissingFile) {
  auto image = load_elf_file("/nonexistent/x.bpf.o");
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().code, ENOENT);
}

TEST(LoaderMalformed, HeaderFieldsAreChecked) {
  const Bytes good = fixture("filter_period");
  Bytes wrong_class = good;
  wrong_class[EI_CLASS] = ELFCLASS32;
  expect_message(load_error(wrong_class), "not ELF64");
  Bytes big_endian = good;
  big_endian[EI_DATA] = ELFDATA2MSB;
  expect_message(load_error(big_endian), "byte order");
  Bytes x86 = good;
  put<Elf64_Half>(x86, offsetof(Elf64_Ehdr, e_machine), EM_X86_64);
  expect_message(load_error(x86), "is not EM_BPF");
  Bytes executable = good;
  put<Elf64_Half>(executable, offsetof(Elf64_Ehdr, e_type), ET_EXEC);
  expect_message(load_error(executable), "not a relocatable object");
  Bytes headers_past_end = good;
  put<Elf64_Off>(headers_past_end, offsetof(Elf64_Ehdr, e_shoff), good.size() - 8);
  expect_message(load_error(headers_past_end), "section headers past the end");
  Bytes bad_names = good;
  put<Elf64_Half>(bad_names, offsetof(Elf64_Ehdr, e_shstrndx), 0xfff0);
  expect_message(load_error(bad_names), "section name table");
}

TEST(LoaderMalformed, TruncatedObject) {
  const Bytes good = fixture("maps_all");
  expect_message(load_error(Bytes(good.begin(), good.begin() + 40)), "truncated ELF header");
  // clang puts the section headers last: half a file has none.
  expect_message(load_error(Bytes(good.begin(), good.begin() + good.size() / 2)),
                 "section headers past the end of the file (truncated?)");
}

TEST(LoaderMalformed, CorruptSectionHeader) {
  Bytes bytes = fixture("globals");
  const std::size_t data = section_header(bytes, ".data");
  put<Elf64_Off>(bytes, data + offsetof(Elf64_Shdr, sh_offset), bytes.size());
  put<Elf64_Xword>(bytes, data + offsetof(Elf64_Shdr, sh_size), 64);
  expect_message(load_error(bytes), "data past the end of the file");
}

// A program's symbol must lie inside its section, checked before libbpf: libbpf 1.1's own check
// adds st_value + st_size, which a st_size of -824 wraps, then mallocs st_size bytes (a fuzz
// campaign's input, fuzz/corpus/bpf_elf/crash-libbpf-program-size-wraps).
TEST(LoaderMalformed, ProgramSymbolOutsideItsSection) {
  const Bytes good = fixture("filter_period");
  const auto symtab = get<Elf64_Shdr>(good, section_header(good, ".symtab"));
  std::size_t func = 0;
  for (std::size_t off = 0; off < symtab.sh_size; off += sizeof(Elf64_Sym)) {
    if (ELF64_ST_TYPE(get<Elf64_Sym>(good, symtab.sh_offset + off).st_info) == STT_FUNC) {
      func = symtab.sh_offset + off;
      break;
    }
  }
  ASSERT_NE(func, 0u) << "no function symbol in filter_period.bpf.o";
  for (const std::uint64_t size : {std::uint64_t{0} - 824, std::uint64_t{1} << 20}) {
    Bytes bytes = good;
    put<Elf64_Xword>(bytes, func + offsetof(Elf64_Sym, st_size), size);
    expect_message(load_error(bytes), "lies outside its section");
  }
}

TEST(LoaderMalformed, NoPrograms) {
  const Error error = load_error(fixture("maps_only"), "maps_only.bpf.o");
  expect_message(error, "no programs");
}

// subprogs.bpf.o: .relperf_event's first relocation is subprog_filter's call at offset 16.
TEST(LoaderMalformed, UnknownRelocationTypeNamesSectionAndOffset) {
  Bytes bytes = fixture("subprogs");
  const std::size_t rel = relocation_at(bytes, ".relperf_event", 0);
  auto entry = get<Elf64_Rel>(bytes, rel);
  entry.r_info = ELF64_R_INFO(ELF64_R_SYM(entry.r_info), 2 /* R_BPF_64_ABS64 */);
  put(bytes, rel, entry);
  const Error error = load_error(bytes);
  expect_message(error, "section 'perf_event' offset " + std::to_string(entry.r_offset));
  expect_message(error, "unsupported relocation type 2");
}

TEST(LoaderMalformed, RelocationOffsetsAreChecked) {
  const Bytes good = fixture("subprogs");
  const std::size_t rel = relocation_at(good, ".relperf_event", 0);
  const auto entry = get<Elf64_Rel>(good, rel);

  Bytes unaligned = good;
  put<Elf64_Addr>(unaligned, rel + offsetof(Elf64_Rel, r_offset), entry.r_offset + 4);
  const Error misaligned = load_error(unaligned);
  expect_message(misaligned, "section 'perf_event' offset " + std::to_string(entry.r_offset + 4));
  expect_message(misaligned, "not on an instruction boundary");

  Bytes outside = good;
  put<Elf64_Addr>(outside, rel + offsetof(Elf64_Rel, r_offset), 1u << 20);
  const Error past = load_error(outside);
  expect_message(past, "section 'perf_event' offset 1048576");
  expect_message(past, "outside the section");

  Bytes on_exit = good;  // subprog_filter's insn 5 is its exit
  put<Elf64_Addr>(on_exit, rel + offsetof(Elf64_Rel, r_offset), 5 * sizeof(Insn));
  expect_message(load_error(on_exit), "not a BPF-to-BPF call");
}

// globals.bpf.o: the first relocation is the lddw of samples_seen at offset 0.
TEST(LoaderMalformed, DataRelocationOnTheWrongInstructionOrSection) {
  const Bytes good = fixture("globals");
  const std::size_t rel = relocation_at(good, ".relperf_event", 0);
  const auto entry = get<Elf64_Rel>(good, rel);
  ASSERT_EQ(entry.r_offset, 0u);

  Bytes not_lddw = good;  // insn 2 is a load through the pointer
  put<Elf64_Addr>(not_lddw, rel + offsetof(Elf64_Rel, r_offset), 2 * sizeof(Insn));
  const Error wrong_kind = load_error(not_lddw);
  expect_message(wrong_kind, "section 'perf_event' offset 16");
  expect_message(wrong_kind, "not lddw");

  // Move the relocated symbol into the "license" section.
  Bytes license_symbol = good;
  const auto symtab = get<Elf64_Shdr>(good, section_header(good, ".symtab"));
  const std::size_t sym = symtab.sh_offset + ELF64_R_SYM(entry.r_info) * sizeof(Elf64_Sym) +
                          offsetof(Elf64_Sym, st_shndx);
  const std::size_t license_index =
      (section_header(good, "license") - get<Elf64_Ehdr>(good, 0).e_shoff) / sizeof(Elf64_Shdr);
  put<Elf64_Section>(license_symbol, sym, static_cast<Elf64_Section>(license_index));
  const Error unknown = load_error(license_symbol);
  expect_message(unknown, "section 'perf_event' offset 0");
  expect_message(unknown, "in section 'license', which is neither maps, global data nor code");
}

TEST(LoaderMalformed, LibbpfMessagesGoIntoTheError) {
  // libbpf refuses a "version" section that is not 4 bytes and says why: that text must be in
  // the Error, and nothing on stderr.
  Bytes bytes = fixture("license_mit");
  put<Elf64_Xword>(bytes, section_header(bytes, "version") + offsetof(Elf64_Shdr, sh_size), 3);
  ::testing::internal::CaptureStderr();
  const Error error = load_error(bytes);
  const std::string stderr_text = ::testing::internal::GetCapturedStderr();
  expect_message(error, "input.bpf.o: libbpf could not parse the object: ");
  expect_message(error, "invalid kver section");
  EXPECT_EQ(stderr_text, "");
}

// What a successful load of any input must satisfy: the invariants the verifier relies on.
void expect_image_invariants(const ObjectImage& image) {
  ASSERT_FALSE(image.programs.empty());
  for (const MapSpec& map : image.maps) {
    if (map.global_data) {
      ASSERT_EQ(map.initial_value.size(), map.value_size);
    }
  }
  for (const ProgramImage& program : image.programs) {
    ASSERT_FALSE(program.insns.empty());
    const auto n = static_cast<std::int64_t>(program.insns.size());
    for (std::int64_t pc = 0; pc < n; ++pc) {
      const Insn& insn = program.insns[static_cast<std::size_t>(pc)];
      const bool call = insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == BPF_PSEUDO_CALL;
      if (call || (is_lddw(insn) && insn.src_reg == BPF_PSEUDO_FUNC)) {
        ASSERT_GE(pc + insn.imm + 1, 0);
        ASSERT_LT(pc + insn.imm + 1, n);
      }
      if (is_lddw(insn) &&
          (insn.src_reg == BPF_PSEUDO_MAP_IDX || insn.src_reg == BPF_PSEUDO_MAP_IDX_VALUE)) {
        ASSERT_LT(pc + 1, n);
        ASSERT_GE(insn.imm, 0);
        ASSERT_LT(static_cast<std::size_t>(insn.imm), image.maps.size());
        if (insn.src_reg == BPF_PSEUDO_MAP_IDX_VALUE) {
          const std::int32_t offset = program.insns[static_cast<std::size_t>(pc) + 1].imm;
          ASSERT_GE(offset, 0);
          ASSERT_LT(static_cast<std::uint32_t>(offset),
                    image.maps[static_cast<std::size_t>(insn.imm)].value_size);
        }
      }
    }
  }
}

struct MutantCounts {
  int loaded = 0;
  int refused = 0;
};

void load_mutant(const Bytes& bytes, MutantCounts& counts) {
  auto image = load_elf_memory(bytes, "mutant.bpf.o");
  if (!image.ok()) {
    ++counts.refused;
    EXPECT_FALSE(image.error().message.empty());
    EXPECT_GT(image.error().code, 0);
    return;
  }
  ++counts.loaded;
  expect_image_invariants(*image);
}

class LoaderMutants : public ::testing::TestWithParam<std::string> {};

TEST_P(LoaderMutants, TruncatedCopiesAreRefusedCleanly) {
  const Bytes good = fixture(GetParam());
  MutantCounts counts;
  for (std::size_t size = 0; size < good.size(); size += size < 256 ? 1 : 13) {
    load_mutant(Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(size)), counts);
  }
  EXPECT_EQ(counts.loaded, 0);  // section headers are last: no prefix is a whole object
  RecordProperty("refused", counts.refused);
}

TEST_P(LoaderMutants, BitFlippedCopiesNeverCrash) {
  const Bytes good = fixture(GetParam());
  std::mt19937_64 random(0x5eed + GetParam().size());
  MutantCounts counts;
  constexpr int kMutants = 700;
  for (int i = 0; i < kMutants; ++i) {
    Bytes bytes = good;
    const int flips = 1 + static_cast<int>(random() % 4);
    for (int f = 0; f < flips; ++f) {
      // Half of the flips hit the ELF header and section headers, where they matter most.
      const auto ehdr = get<Elf64_Ehdr>(good, 0);
      const bool in_headers = random() % 2 == 0;
      const std::size_t at =
          in_headers ? (random() % 2 == 0 ? random() % sizeof(Elf64_Ehdr)
                                          : ehdr.e_shoff + random() % (good.size() - ehdr.e_shoff))
                     : random() % good.size();
      bytes[at] ^= static_cast<std::uint8_t>(1u << (random() % 8));
    }
    load_mutant(bytes, counts);
  }
  EXPECT_EQ(counts.loaded + counts.refused, kMutants);
  RecordProperty("loaded", counts.loaded);
  RecordProperty("refused", counts.refused);
}

TEST_P(LoaderMutants, RandomBytesInBtfAreRefusedOrHarmless) {
  // .BTF is what libbpf trusts most: overwrite its words with random values.
  const Bytes good = fixture(GetParam());
  const auto btf = get<Elf64_Shdr>(good, section_header(good, ".BTF"));
  std::mt19937_64 random(0xb7f + GetParam().size());
  MutantCounts counts;
  for (int i = 0; i < 300; ++i) {
    Bytes bytes = good;
    for (int w = 0; w < 3; ++w) {
      const std::size_t at = btf.sh_offset + (random() % (btf.sh_size / 4)) * 4;
      const std::uint32_t value = random() % 3 == 0 ? static_cast<std::uint32_t>(random() % 64)
                                                    : static_cast<std::uint32_t>(random());
      put(bytes, at, value);
    }
    load_mutant(bytes, counts);
  }
  RecordProperty("loaded", counts.loaded);
  RecordProperty("refused", counts.refused);
}

std::vector<std::string> all_fixtures() {
  std::vector<std::string> names = testing::loadable_fixtures();
  names.push_back("maps_only");
  return names;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LoaderMutants, ::testing::ValuesIn(all_fixtures()),
                         testing::fixture_test_name);

}  // namespace
}  // namespace userperf::bpf
