// Runs userperf_bpf_plugin as bpf_conformance's runner does (memory as argv[1], the program's
// hex on stdin) for a few suite files, and checks r0, plus the protocol's error cases: on the
// interpreter and again with --jit (the checked JIT).
//   bpf_plugin_check PLUGIN_PATH
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bpf/isa/assembler.hpp"
#include "bpf/isa/conformance_file.hpp"
#include "bpf/isa/encoding.hpp"

extern char** environ;

namespace {

using namespace userperf::bpf;

struct Outcome {
  int status = -1;
  std::string out, err;
};

std::string drain(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;)
    text.append(buffer, static_cast<std::size_t>(n));
  close(fd);
  return text;
}

// Spawns the plugin with `args`, writes `input` to its stdin, collects stdout and stderr.
Outcome spawn(const std::string& plugin, const std::vector<std::string>& args,
              const std::string& input) {
  int in[2], out[2], err[2];
  if (pipe(in) || pipe(out) || pipe(err)) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]})
    posix_spawn_file_actions_addclose(&actions, fd);
  std::vector<char*> argv{const_cast<char*>(plugin.c_str())};
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, plugin.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  Outcome outcome;
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    return outcome;
  }
  // Inputs are small (a pipe holds 64 KiB), so writing first cannot deadlock. A plugin that
  // refuses its arguments exits without reading: EPIPE then (SIGPIPE is ignored in main) is
  // not an error of the plugin's, and its status and stderr still say what it did.
  const ssize_t written = write(in[1], input.data(), input.size());
  if (written != static_cast<ssize_t>(input.size()) && !(written < 0 && errno == EPIPE)) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    waitpid(pid, nullptr, 0);
    return outcome;
  }
  close(in[1]);
  outcome.out = drain(out[0]);
  outcome.err = drain(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

std::string program_hex(std::string_view text) {
  auto insns = assemble(text);
  if (!insns) return "";
  return format_hex_bytes(insns_to_bytes(*insns)) + "\n";
}

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++failures;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: bpf_plugin_check PLUGIN_PATH\n");
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  const std::string plugin = argv[1];
  const std::filesystem::path suite = USERPERF_BPF_CONFORMANCE_DIR;
  for (const std::string tier : {"--interpret", "--jit"}) {
    for (const char* name : {"add.data", "ldxb.data", "mem-len.data", "lock_xchg.data",
                             "call_local.data", "prime.data", "stb.data", "callx.data"}) {
      std::ifstream in(suite / name);
      std::stringstream text;
      text << in.rdbuf();
      auto file = parse_conformance_file(text.str());
      if (!file || !file->result) {
        check(false, std::string(name) + ": cannot read the test");
        continue;
      }
      auto insns = assemble(file->asm_text);
      if (!insns) {
        check(false, std::string(name) + ": " + insns.error().message);
        continue;
      }
      std::vector<std::string> args;
      if (!file->memory.empty()) args.push_back(format_hex_bytes(file->memory));
      args.push_back(tier);
      Outcome outcome = spawn(plugin, args, format_hex_bytes(insns_to_bytes(*insns)) + "\n");
      char expected[32];
      std::snprintf(expected, sizeof(expected), "0x%" PRIx64 "\n", *file->result);
      check(outcome.status == 0 && outcome.out == expected,
            tier + " " + name + ": expected " + expected + " got status " +
                std::to_string(outcome.status) + " stdout '" + outcome.out + "' stderr '" +
                outcome.err + "'");
    }
    // --program instead of stdin, and the runner's empty plugin-options argument.
    Outcome by_option =
        spawn(plugin, {"", tier, "--program", program_hex("mov %r0, 42\nexit")}, "");
    check(by_option.status == 0 && by_option.out == "0x2a\n",
          tier + " --program: stdout '" + by_option.out + "'");
    // The tiers' budgets differ: the interpreter's counts instructions (10 M), the checked JIT's
    // backward jumps. A loop of 4 M rounds of 3 instructions ends on the JIT only, so this shows
    // that --jit reached the JIT.
    Outcome loop = spawn(plugin, {tier},
                         program_hex("mov %r0, 0\nmov %r1, 4000000\nloop:\nadd %r0, 1\n"
                                     "sub %r1, 1\njne %r1, 0, loop\nexit"));
    if (tier == "--jit") {
      check(loop.status == 0 && loop.out == "0x3d0900\n", "--jit loop: stdout '" + loop.out + "'");
    } else {
      check(
          loop.status == 1 && loop.err.find("budget") != std::string::npos,
          "--interpret loop: status " + std::to_string(loop.status) + " stderr '" + loop.err + "'");
    }
    // Errors: a fault, an invalid program, bad hex, --elf. Each exits 1 with a message on stderr.
    struct ErrorCase {
      std::vector<std::string> args;
      std::string input;
      std::string message;
    } errors[] = {
        {{},
         program_hex("mov %r1, 0\nldxdw %r0, [%r1]\nexit"),
         "memory fault at instruction 1 (address 0x0)"},
        {{}, program_hex("mov %r0, 1"), "the last instruction can fall through the end"},
        {{}, "b7 00 0\n", "odd number of hex digits"},
        {{"--elf"}, program_hex("exit"), "--elf is not supported"},
    };
    for (ErrorCase& c : errors) {
      c.args.push_back(tier);
      Outcome outcome = spawn(plugin, c.args, c.input);
      check(outcome.status == 1 && outcome.out.empty() &&
                outcome.err.find(c.message) != std::string::npos,
            tier + " error '" + c.message + "': status " + std::to_string(outcome.status) +
                " stderr '" + outcome.err + "'");
    }
  }
  std::printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
