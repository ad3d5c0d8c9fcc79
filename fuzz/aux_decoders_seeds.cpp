// Writes the seeds of fuzz/corpus/aux_decoders: streams of the encoders the sources use (the
// scenarios of tests/unit/trace/decoder_fuzz_test.cpp, shorter), each prefixed by the format byte
// of fuzz/aux_decoders_fuzzer.cpp (0 synthetic, 1 calltrace, 2 log; +4 symbolizes). Built beside
// the fuzz targets (aux_decoders_seeds): see fuzz/corpus/README.md.
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "trace/calltrace_format.hpp"
#include "trace/log_format.hpp"
#include "trace/synthetic_format.hpp"

using namespace userperf::trace;

namespace {

void write(const std::string& path, std::uint8_t format, const std::vector<std::uint8_t>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fputc(format, f);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

std::vector<std::uint8_t> calltrace(int events, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  CalltraceEncoder encoder;
  std::vector<std::uint8_t> out;
  std::uint64_t now = 1'000'000;
  for (int i = 0; i < events; ++i) {
    now += rng() % 2 == 0 ? rng() % 4000 : rng() % 100'000'000;
    const CallEntry e =
        encoder.encode(rng() % 2 == 0, rng() & 0xffff'ffff'ffff, rng() % 3 == 0 ? 0 : rng(), now);
    encoder.commit(e);
    const auto* p = reinterpret_cast<const std::uint8_t*>(e.units);
    out.insert(out.end(), p, p + e.bytes);
  }
  return out;
}

std::vector<std::uint8_t> log(int records, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> out;
  for (int i = 0; i < records; ++i) {
    std::string text = "tick " + std::to_string(i) + std::string(rng() % 20, 'x');
    if (i % 3 == 0) text += "\n\t\x01";
    std::uint8_t prefix[kLogMaxPrefix];
    const std::size_t n = log_record_prefix(static_cast<std::uint32_t>(1000 + i % 3), 5000 + i * 77,
                                            text.size(), prefix);
    out.insert(out.end(), prefix, prefix + n);
    out.insert(out.end(), text.begin(), text.end());
    out.resize(out.size() + (log_record_bytes(text.size()) - n - text.size()));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
  std::vector<std::uint8_t> synthetic(512);
  synthetic_fill(77, 8192, synthetic);
  write(dir + "/synthetic_window", 0, synthetic);
  // An AUX sample of a young stream: zeros before position 0, then words, then padding.
  std::vector<std::uint8_t> young(256, 0);
  synthetic_fill(3, 0, std::span<std::uint8_t>(young).subspan(64, 128));
  write(dir + "/synthetic_leading_zero", 4, young);
  write(dir + "/calltrace_stream", 1, calltrace(60, 5));
  write(dir + "/calltrace_symbolized", 5, calltrace(20, 9));
  std::vector<std::uint8_t> cut = calltrace(40, 11);
  cut.erase(cut.begin(), cut.begin() + 12);  // a window starting mid-entry
  write(dir + "/calltrace_cut", 1, cut);
  write(dir + "/log_stream", 2, log(12, 6));
  std::vector<std::uint8_t> log_cut = log(10, 8);
  log_cut.erase(log_cut.begin(), log_cut.begin() + 21);  // a window starting mid-record
  write(dir + "/log_cut", 2, log_cut);
  return 0;
}
