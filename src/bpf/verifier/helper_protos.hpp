// Helper prototypes: what the verifier checks at each call and what a helper may assume, keyed by
// the kernel's helper id. One table serves the verifier and the runtime (which must provide a
// function for every helper the table allows), so the two agree by construction.
#pragma once

#include <cstdint>

namespace userperf::bpf {

enum class ArgType : std::uint8_t {
  kNone,                  // no argument from here on
  kAnything,              // any initialized register
  kPtrToCtx,              // the ctx pointer, unmodified
  kConstMapPtr,           // a map from lddw
  kPtrToMapKey,           // initialized memory of the map's key_size (stack or map value)
  kPtrToMapValue,         // initialized memory of the map's value_size
  kPtrToMem,              // initialized, readable memory; its size is the next argument
  kPtrToUninitMem,        // writable memory the helper fills; its size is the next argument
  kPtrToUninitMemOrNull,  // the same, or NULL (then the size must be 0)
  kConstSize,             // a scalar > 0, bounded (the size of the previous argument)
  kConstSizeOrZero,       // a scalar >= 0, bounded
  kConstAllocSizeOrZero,  // a known constant (the size of the memory the helper returns)
  kPtrToLong,             // writable 8 bytes
  kReleaseRingbufMem,     // ARG_PTR_TO_RINGBUF_MEM | OBJ_RELEASE: a reserved record, offset 0
  kPtrToFunc,             // a callback: lddw of a static subprogram's address
  kPtrToStackOrNull,      // a stack pointer (any offset) or NULL: a callback's context
  kPtrToBtfIdTask,        // ARG_PTR_TO_BTF_ID of struct task_struct (not untrusted, not NULL)
};

enum class RetType : std::uint8_t {
  kInteger,
  kVoid,
  kPtrToMapValueOrNull,    // lookup: NULL-check before use
  kPtrToRingbufMemOrNull,  // reserve: NULL-check, then release (submit/discard) on every path
  kPtrToBtfIdTask,         // RET_PTR_TO_BTF_ID_TRUSTED of struct task_struct (never NULL)
};

struct HelperProto {
  const char* name;  // as the kernel names it, without the bpf_ prefix
  RetType ret;
  ArgType args[5];
  bool gpl_only;
};

// The helpers a BPF_PROG_TYPE_PERF_EVENT program may call (pe_prog_func_proto and the tracing
// ones it falls back to), or nullptr.
const HelperProto* perf_event_helper_proto(std::int32_t id);

}  // namespace userperf::bpf
