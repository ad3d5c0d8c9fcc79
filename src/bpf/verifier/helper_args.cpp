// A helper call's arguments (check_func_arg, check_helper_mem_access, check_map_func_compatibility
// in the kernel's verifier): each register against its ArgType in perf_event_helper_proto(), the
// memory a helper may read or fill, a map's compatibility with the helper, the constant key of a
// map lookup, and the stack a helper filled. calls.cpp's do_call runs them in order.
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <string>

#include "bpf/verifier/checker.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {
namespace {

// Memory a helper may read or fill: the stack, a NULL-checked map value, ringbuf record or memory
// argument.
bool is_helper_mem(const RegState& r) {
  return r.type == RegType::kPtrToStack ||
         ((r.type == RegType::kPtrToMapValue || r.type == RegType::kPtrToRingbufMem ||
           r.type == RegType::kPtrToMem) &&
          !r.maybe_null);
}

}  // namespace

std::int64_t Checker::const_map_key(const RegState& key, std::uint32_t key_size) {
  if (key.type != RegType::kPtrToStack || !key.var_off.is_const()) return -1;
  const std::int64_t off = key.off + static_cast<std::int64_t>(key.var_off.value);
  if (off >= 0 || off < -kMaxStack) return -1;
  FuncState& f = cur_.frames[key.frameno];
  const auto byte_slot = static_cast<std::size_t>(-off - 1);
  const std::size_t spi = byte_slot / 8;
  if (spi >= f.stack.size()) return -1;
  const StackSlot& s = f.stack[spi];
  std::uint32_t zero = 0;
  for (int i = static_cast<int>(byte_slot % 8);
       i >= 0 && s.type[static_cast<std::size_t>(i)] == StackByte::kZero; --i) {
    ++zero;
  }
  if (zero >= key_size) return 0;
  if (s.type[7] != StackByte::kSpill || !s.spilled.is_scalar()) return -1;
  std::uint32_t spill = 0;
  for (int i = static_cast<int>(byte_slot % 8);
       i >= 0 && s.type[static_cast<std::size_t>(i)] == StackByte::kSpill; --i) {
    ++spill;
  }
  if (spill != key_size || !s.spilled.var_off.is_const()) return -1;
  need_precise_slot(key.frameno, spi);
  return static_cast<std::int64_t>(s.spilled.var_off.value);
}

int Checker::check_helper_mem(int regno, std::uint64_t size, bool write, bool zero_ok,
                              CallMeta& meta, const char* what) {
  const RegState ptr = reg(regno);
  const int isize = static_cast<int>(size);
  // check_helper_mem_access: a zero-byte access through NULL is allowed, whatever the argument
  // type (only the _OR_NULL ones let a NULL pointer get this far).
  if (ptr.is_null() && zero_ok && size == 0) return 0;
  if (ptr.type == RegType::kPtrToStack) {
    std::int64_t min_off = 0;
    std::int64_t max_off = 0;
    if (size == 0) {
      // check_stack_access_within_bounds: a zero-byte access still needs its offset in the
      // stack, and grows the function's depth to it (grow_stack_state).
      if (zero_ok) return check_stack_bounds(regno, ptr, 0, 0, what, min_off, max_off);
      // A map with key_size 0 (RINGBUF) passed to a key-taking helper.
      return log_.reject(EACCES, "invalid zero-sized read");
    }
    if (int err = check_stack_bounds(regno, ptr, 0, isize, what, min_off, max_off)) {
      return err;
    }
    if (write) {
      meta.raw_regno = regno;
      meta.raw_size = size;
    } else {
      // Privileged: uninitialized bytes and spilled pointers may be read.
      FuncState& f = cur_.frames[ptr.frameno];
      if (f.stack.size() * 8 < static_cast<std::size_t>(-min_off)) {
        f.stack.resize(static_cast<std::size_t>((-min_off + 7) / 8));
      }
    }
    return 0;
  }
  if (ptr.type == RegType::kPtrToMapValue && !ptr.maybe_null) {
    return check_map_value_access(regno, ptr, 0, isize, write, zero_ok);
  }
  if ((ptr.type == RegType::kPtrToRingbufMem || ptr.type == RegType::kPtrToMem) &&
      !ptr.maybe_null) {
    return check_mem_region_access(regno, ptr, 0, isize, ptr.mem_size, zero_ok);
  }
  return log_.reject(EACCES, "R%d type=%s expected=fp", regno, reg_type_name(ptr));
}

int Checker::check_helper_arg(int regno, ArgType type, CallMeta& meta, ArgType prev) {
  if (int err = check_read(regno)) return err;
  const RegState r = reg(regno);
  auto expect = [&](const char* what) {
    return log_.reject(EACCES, "R%d type=%s expected=%s", regno, reg_type_name(r), what);
  };
  switch (type) {
    case ArgType::kNone:
    case ArgType::kAnything:
      return 0;
    case ArgType::kPtrToCtx:
      if (r.type != RegType::kPtrToCtx) return expect("ctx");
      return check_ctx_ptr_unmodified(regno);
    case ArgType::kConstMapPtr:
      if (r.type != RegType::kConstPtrToMap) return expect("map_ptr");
      meta.map = r.map;
      return 0;
    case ArgType::kPtrToMapKey:
    case ArgType::kPtrToMapValue: {
      if (!is_helper_mem(r)) {
        return expect("fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_");
      }
      const bool is_key = type == ArgType::kPtrToMapKey;
      if (meta.map < 0) {
        return log_.reject(EACCES, "invalid map_ptr to access map->%s", is_key ? "key" : "value");
      }
      const MapSpec& map = (*options_.maps)[static_cast<std::size_t>(meta.map)];
      const std::uint32_t size = is_key ? map.key_size : map.value_size;
      if (int err = check_helper_mem(regno, size, false, false, meta)) return err;
      if (is_key && (map.type == BPF_MAP_TYPE_ARRAY || map.type == BPF_MAP_TYPE_PERCPU_ARRAY)) {
        meta.const_map_key = const_map_key(r, size);
      }
      return 0;
    }
    case ArgType::kPtrToUninitMemOrNull:
      if (r.is_null()) {  // checked with the size: NULL goes with a size of 0 only
        meta.mem_regno = regno;
        meta.mem_write = true;
        return 0;
      }
      [[fallthrough]];
    case ArgType::kPtrToMem:
    case ArgType::kPtrToUninitMem:
      if (!is_helper_mem(r)) {
        return expect("fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_");
      }
      meta.mem_regno = regno;
      meta.mem_write = type != ArgType::kPtrToMem;
      return 0;
    case ArgType::kConstSize:
    case ArgType::kConstSizeOrZero: {
      if (r.type != RegType::kScalar) return expect("scalar");
      const bool zero_ok = type == ArgType::kConstSizeOrZero;
      if (r.smin < 0) {
        return log_.reject(
            EACCES, "R%d min value is negative, either use unsigned or 'var &= const'", regno);
      }
      if (r.umin == 0 && !zero_ok) {
        return log_.reject(EACCES, "R%d invalid zero-sized read: u64=[%" PRIu64 ",%" PRIu64 "]",
                           regno, r.umin, r.umax);
      }
      if (r.umax >= kMaxVarSize) {
        return log_.reject(
            EACCES, "R%d unbounded memory access, use 'var &= const' or 'if (var < const)'", regno);
      }
      meta.msize_max = r.umax;
      need_precise_reg(regno);
      if (prev != ArgType::kPtrToMem && prev != ArgType::kPtrToUninitMem &&
          prev != ArgType::kPtrToUninitMemOrNull) {
        return 0;
      }
      return check_helper_mem(regno - 1, r.umax, meta.mem_write, zero_ok, meta);
    }
    case ArgType::kConstAllocSizeOrZero:
      if (r.type != RegType::kScalar) return expect("scalar");
      if (!r.var_off.is_const()) return log_.reject(EACCES, "R%d is not a known constant'", regno);
      meta.alloc_size = r.var_off.value;
      need_precise_reg(regno);
      return 0;
    case ArgType::kReleaseRingbufMem:
      if (r.type != RegType::kPtrToRingbufMem || r.maybe_null) return expect("ringbuf_mem");
      // check_func_arg_reg_off for OBJ_RELEASE: exactly the pointer the helper returned.
      if (r.off) {
        return log_.reject(
            EINVAL, "R%d must have zero offset when passed to release func or trusted arg to kfunc",
            regno);
      }
      if (!r.var_off.is_const() || r.var_off.value) {
        return log_.reject(EACCES, "variable ringbuf_mem access var_off=%s disallowed",
                           r.var_off.str().c_str());
      }
      if (!r.ref_obj_id) {
        return log_.reject(EINVAL, "R%d must be referenced when passed to release function", regno);
      }
      meta.release_ref = r.ref_obj_id;
      return 0;
    case ArgType::kPtrToFunc:
      if (r.type != RegType::kPtrToFunc) return expect("func");
      meta.callback = r.subprog;
      return 0;
    case ArgType::kPtrToBtfIdTask:
      return check_task_arg(regno);
    case ArgType::kPtrToStackOrNull:
      if (r.is_null()) return 0;
      if (r.type != RegType::kPtrToStack) return expect("fp");
      return 0;
    default:
      return log_.reject(EINVAL, "unsupported arg type for R%d", regno);
  }
}

int Checker::check_map_compat(int map_index, std::int32_t helper) {
  if (map_index < 0) return 0;
  const MapSpec& map = (*options_.maps)[static_cast<std::size_t>(map_index)];
  bool ok = true;
  switch (map.type) {
    case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
      ok = helper == BPF_FUNC_perf_event_read || helper == BPF_FUNC_perf_event_output ||
           helper == BPF_FUNC_perf_event_read_value;
      break;
    case BPF_MAP_TYPE_RINGBUF:
      ok = helper == BPF_FUNC_ringbuf_output || helper == BPF_FUNC_ringbuf_reserve ||
           helper == BPF_FUNC_ringbuf_query;
      break;
    case BPF_MAP_TYPE_STACK_TRACE:
      ok = helper == BPF_FUNC_get_stackid;
      break;
    case BPF_MAP_TYPE_PROG_ARRAY:
      ok = helper == BPF_FUNC_tail_call;
      break;
    case BPF_MAP_TYPE_CGROUP_ARRAY:
      ok = helper == BPF_FUNC_skb_under_cgroup || helper == BPF_FUNC_current_task_under_cgroup;
      break;
    case BPF_MAP_TYPE_ARRAY_OF_MAPS:
    case BPF_MAP_TYPE_HASH_OF_MAPS:
      ok = helper == BPF_FUNC_map_lookup_elem;
      break;
    case BPF_MAP_TYPE_QUEUE:
    case BPF_MAP_TYPE_STACK:
      ok = helper == BPF_FUNC_map_push_elem || helper == BPF_FUNC_map_pop_elem ||
           helper == BPF_FUNC_map_peek_elem;
      break;
    default:
      break;
  }
  switch (helper) {
    case BPF_FUNC_perf_event_read:
    case BPF_FUNC_perf_event_output:
    case BPF_FUNC_perf_event_read_value:
      ok = ok && map.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY;
      break;
    case BPF_FUNC_ringbuf_output:
    case BPF_FUNC_ringbuf_reserve:
    case BPF_FUNC_ringbuf_query:
      ok = ok && map.type == BPF_MAP_TYPE_RINGBUF;
      break;
    case BPF_FUNC_get_stackid:
      ok = ok && map.type == BPF_MAP_TYPE_STACK_TRACE;
      break;
    case BPF_FUNC_tail_call:
      ok = ok && map.type == BPF_MAP_TYPE_PROG_ARRAY;
      break;
    case BPF_FUNC_skb_under_cgroup:
    case BPF_FUNC_current_task_under_cgroup:
      ok = ok && map.type == BPF_MAP_TYPE_CGROUP_ARRAY;
      break;
    case BPF_FUNC_map_push_elem:
    case BPF_FUNC_map_pop_elem:
    case BPF_FUNC_map_peek_elem:
      ok = ok && (map.type == BPF_MAP_TYPE_QUEUE || map.type == BPF_MAP_TYPE_STACK);
      break;
    default:
      break;
  }
  if (!ok) {
    return log_.reject(EINVAL, "cannot pass map_type %u into func %s#%d", map.type,
                       helper_label(helper), helper);
  }
  return 0;
}

// Stack memory a helper (or a global function) was given to fill: every byte becomes initialized
// data, spilled registers there unknown.
void Checker::mark_stack_written(const CallMeta& meta) {
  if (meta.raw_regno < 0 || meta.raw_size == 0) return;
  const RegState ptr = reg(meta.raw_regno);
  const std::int64_t base = ptr.off;
  const std::int64_t lo = ptr.var_off.is_const()
                              ? base + static_cast<std::int64_t>(ptr.var_off.value)
                              : base + ptr.smin;
  const std::int64_t hi =
      (ptr.var_off.is_const() ? lo : base + ptr.smax) + static_cast<std::int64_t>(meta.raw_size);
  stack_mark_misc(cur_.frames[ptr.frameno], lo, std::min<std::int64_t>(hi, 0), false);
}

// The kernel offers bpf_get_func_ip to every tracing type, then refuses it for perf_event
// programs once the arguments are checked (check_get_func_ip).
int Checker::check_get_func_ip(std::int32_t id) {
  if (!options_.gpl_compatible) {
    return log_.reject(EINVAL,
                       "cannot call GPL-restricted function from non-GPL compatible program");
  }
  CallMeta meta;
  if (int err = check_helper_arg(1, ArgType::kPtrToCtx, meta, ArgType::kNone)) return err;
  return log_.reject(kEnotsupp, "func %s#%d not supported for program type %u", helper_label(id),
                     id, options_.prog_type);
}

}  // namespace userperf::bpf
