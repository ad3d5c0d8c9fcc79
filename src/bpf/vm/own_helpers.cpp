// Helpers the interpreter runs itself. bpf_loop(nr_loops, callback, ctx, flags) as a callback
// driver (interpreter.hpp), as the kernel's:
// flags != 0: -EINVAL; nr_loops (a u32) > kMaxLoops: -E2BIG; 0 loops: 0 without a call; otherwise
// callback(index, ctx) until it returns non-zero or the count is reached; the result is the number
// of calls made. And the probe load both tiers share.
#include <cerrno>

#include "bpf/vm/interpreter.hpp"

namespace userperf::bpf {
namespace {

std::uint64_t negative(int err) {
  return static_cast<std::uint64_t>(-static_cast<std::int64_t>(err));
}

// state.words: the count, the running index, ctx.
CallbackStep call_at(const CallbackState& state) {
  CallbackStep step;
  step.call = true;
  step.args[0] = state.words[1];
  step.args[1] = state.words[2];
  return step;
}

CallbackStep loop_begin(const std::uint64_t* args, void*, CallbackState& state) {
  CallbackStep step;
  const auto count = static_cast<std::uint32_t>(args[0]);
  if (args[3] != 0) {
    step.result = negative(EINVAL);
  } else if (count > kMaxLoops) {
    step.result = negative(E2BIG);
  } else if (count != 0) {
    state.words[0] = count;
    state.words[1] = 0;
    state.words[2] = args[2];
    return call_at(state);
  }
  return step;
}

CallbackStep loop_resume(std::uint64_t r0, void*, CallbackState& state) {
  ++state.words[1];
  if (r0 != 0 || state.words[1] == state.words[0]) {  // stopped, or done: the calls made
    CallbackStep step;
    step.result = state.words[1];
    return step;
  }
  return call_at(state);
}

constexpr CallbackDriver kBpfLoop{2, loop_begin, loop_resume};

}  // namespace

const CallbackDriver& bpf_loop_driver() {
  return kBpfLoop;
}

std::uint64_t probe_load(ProbeRead read, void* env, std::uint64_t addr, std::uint64_t size_sign) {
  const std::uint64_t bytes = size_sign & 0x7f;
  std::uint64_t value = 0;
  if (read == nullptr || bytes > sizeof value || !read(env, addr, &value, bytes)) return 0;
  if ((size_sign & 0x80) != 0 && bytes < 8) {
    const auto shift = static_cast<unsigned>(64 - 8 * bytes);
    value = static_cast<std::uint64_t>(static_cast<std::int64_t>(value << shift) >> shift);
  }
  return value;
}

}  // namespace userperf::bpf
