// The bpf_conformance plugin protocol (one process per test):
//   userperf_bpf_plugin [MEMORY_HEX] [--interpret | --jit] [--program PROGRAM_HEX] [--elf]
// The program comes as hex byte pairs on stdin (one line) unless --program gives it; MEMORY_HEX,
// when present, is the memory passed in r1 (its length in r2). It runs on the interpreter, or with
// --jit on the x86-64 JIT in checked mode (the suite's programs are not verified:
// bpf/jit/jit_conformance.hpp). On success r0 is printed in hex
// and the exit status is 0; on any error a message goes to stderr and the status is 1.
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "bpf/isa/encoding.hpp"
#include "bpf/jit/jit_conformance.hpp"
#include "bpf/vm/conformance.hpp"

namespace {

using namespace userperf::bpf;

int fail(const std::string& message) {
  std::fprintf(stderr, "userperf_bpf_plugin: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string memory_hex;
  std::string program_hex;
  bool have_memory = false, have_program = false, jit = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--elf") return fail("--elf is not supported: pass raw instructions");
    if (arg == "--interpret" || arg == "--jit") {  // the last one given counts
      jit = arg == "--jit";
      continue;
    }
    if (arg == "--program") {
      if (i + 1 >= argc) return fail("--program needs a hex argument");
      program_hex = argv[++i];
      have_program = true;
      continue;
    }
    if (arg.starts_with("--")) return fail("unknown option " + std::string(arg));
    if (arg.find_first_not_of(" \t") == std::string_view::npos) continue;  // empty options
    if (have_memory) return fail("more than one memory argument");
    memory_hex = arg;
    have_memory = true;
  }
  if (!have_program) {
    program_hex.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  auto program_bytes = parse_hex_bytes(program_hex);
  if (!program_bytes) return fail("program: " + program_bytes.error().message);
  auto insns = insns_from_bytes(*program_bytes);
  if (!insns) return fail("program: " + insns.error().message);
  auto memory = parse_hex_bytes(memory_hex);
  if (!memory) return fail("memory: " + memory.error().message);

  auto run =
      jit ? run_conformance_program_jit(*insns, *memory) : run_conformance_program(*insns, *memory);
  if (!run) return fail(run.error().message);
  if (run->status != RunStatus::kOk && run->status != RunStatus::kAborted) {
    std::string message =
        std::string(to_string(run->status)) + " at instruction " + std::to_string(run->pc);
    if (run->status == RunStatus::kFault) {
      char address[32];
      std::snprintf(address, sizeof(address), " (address 0x%" PRIxPTR ")", run->fault_addr);
      message += address;
    }
    return fail(message);
  }
  std::printf("0x%" PRIx64 "\n", run->r0);
  return 0;
}
