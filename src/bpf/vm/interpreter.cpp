#include "bpf/vm/interpreter.hpp"

#include "bpf/vm/decoded_op.hpp"

namespace userperf::bpf {

struct Interpreter::Impl {
  vm::Program program;
};

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::kOk:
      return "ok";
    case RunStatus::kFault:
      return "memory fault";
    case RunStatus::kBudget:
      return "instruction budget exhausted";
    case RunStatus::kCallDepth:
      return "call depth exceeded";
    case RunStatus::kBadHelper:
      return "unknown helper";
    case RunStatus::kAborted:
      return "aborted by a helper";
  }
  return "?";
}

const vm::Program& vm::program_of(const Interpreter& interpreter) {
  return interpreter.impl_->program;
}

Interpreter::Interpreter() : impl_(std::make_unique<Impl>()) {}
Interpreter::~Interpreter() = default;

Expected<std::unique_ptr<Interpreter>> Interpreter::load(std::span<const Insn> insns,
                                                         InterpreterOptions options) {
  auto program = vm::decode(insns, std::move(options));
  if (!program) return program.error();
  std::unique_ptr<Interpreter> interpreter(new Interpreter());
  interpreter->impl_->program = std::move(*program);
  return interpreter;
}

RunResult Interpreter::run(std::uint64_t r1, std::uint64_t r2,
                           std::span<const MemoryRegion> regions, void* env) const {
  return vm::execute(impl_->program, r1, r2, regions, env);
}

std::size_t Interpreter::size() const {
  return impl_->program.ops.size();
}

}  // namespace userperf::bpf
