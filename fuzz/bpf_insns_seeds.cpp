// Writes bpf_insns seeds: each verifier corpus .asm file or conformance .data file given, assembled
// with the fuzz target's map names (bpf_insns_maps.hpp), as a BpfInsnsHeader and its instructions.
// Usage: bpf_insns_seeds OUT_DIR FILE...  (a file that does not assemble is skipped and named)
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "bpf/isa/assembler.hpp"
#include "bpf/isa/conformance_file.hpp"
#include "bpf_insns_maps.hpp"

using namespace userperf;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR FILE...\n", argv[0]);
    return 2;
  }
  int written = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string path = argv[i];
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    bpf::AssembleOptions options;
    options.map_index = fuzz::bpf_insns_map_index;
    std::string source = text.str();
    if (path.ends_with(".data")) {
      auto file = bpf::parse_conformance_file(source);
      if (!file) {
        std::fprintf(stderr, "skip %s: %s\n", path.c_str(), file.error().message.c_str());
        continue;
      }
      source = file->asm_text;
    }
    auto insns = bpf::assemble(source, options);
    if (!insns) {
      std::fprintf(stderr, "skip %s: %s\n", path.c_str(), insns.error().message.c_str());
      continue;
    }
    const fuzz::BpfInsnsHeader header{0x401000, 0x2000, 1000};
    const std::string name = path.substr(path.find_last_of('/') + 1);
    std::ofstream out(std::string(argv[1]) + "/" + name.substr(0, name.find_last_of('.')),
                      std::ios::binary);
    out.write(reinterpret_cast<const char*>(&header), sizeof header);
    out.write(reinterpret_cast<const char*>(insns->data()),
              static_cast<std::streamsize>(insns->size() * sizeof(bpf::Insn)));
    ++written;
  }
  std::printf("%d seeds written\n", written);
  return 0;
}
