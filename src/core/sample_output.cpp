// SIGNAL-SAFE: see sample_output.hpp.
#include "core/sample_output.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>

#include "abi/sample_layout.hpp"
#include "core/aux_sample.hpp"
#include "core/read_values.hpp"
#include "core/stack_copy.hpp"
#include "ring/ring_memory.hpp"

namespace userperf::core {

namespace {

constexpr std::uint32_t kLostBodySize = 2 * sizeof(std::uint64_t);  // id, lost

std::uint64_t regs_bytes(const SampleRegs* regs, std::uint64_t mask) {
  if (regs == nullptr || regs->abi == PERF_SAMPLE_REGS_ABI_NONE) return sizeof(std::uint64_t);
  return sizeof(std::uint64_t) * (1 + static_cast<std::uint64_t>(std::popcount(mask)));
}

void write_regs(ring::OutputHandle& h, const SampleRegs* regs, std::uint64_t mask) {
  const std::uint64_t abi = regs == nullptr ? std::uint64_t{PERF_SAMPLE_REGS_ABI_NONE} : regs->abi;
  h.put(abi);
  if (abi == PERF_SAMPLE_REGS_ABI_NONE) return;
  for (std::uint64_t bits = mask; bits != 0; bits &= bits - 1) {
    const int reg = std::countr_zero(bits);
    h.put(reg < PERF_REG_X86_64_MAX ? regs->values[reg] : std::uint64_t{0});
  }
}

// get_perf_callchain's max_stack: sample_max_stack bounds the addresses, the context markers come
// on top. Open gives a 0 the engine's EngineLimits::max_stack (abi::copy_attr, as perf_copy_attr
// gives it kernel.perf_event_max_stack), so that is the one source of the default.
std::uint64_t callchain_limit(const Event& event) {
  return std::uint64_t{event.attr.sample_max_stack} + 8;
}

// get_perf_callchain with exclude_callchain_user: the entries before the user context marker (a
// dwarf-mode sample's user stack is unwound from REGS_USER + STACK_USER instead).
std::uint64_t kernel_part(const SampleData& data) {
  for (std::uint64_t i = 0; i < data.callchain_nr; ++i) {
    if (data.callchain[i] == PERF_CONTEXT_USER) return i;
  }
  return data.callchain_nr;
}

std::uint64_t stream_id(const Event& event) {
  return event.id;
}

// PERF_SAMPLE_AUX's data, last in the record: what still fits under the 16-bit record size after
// the `size` bytes before it (its size word included), rounded down to 8 (perf_prepare_sample).
// Returns the record's size with it.
std::uint64_t size_aux_field(const Event& event, SampleData& data, std::uint64_t size) {
  const std::uint64_t room = size < 0xffff ? (0xffff - size) & ~std::uint64_t{7} : 0;
  data.aux_copy = std::min<std::uint64_t>({event.attr.aux_sample_size, room, data.aux_available});
  data.aux_size = abi::align8(data.aux_copy);
  return size + data.aux_size;
}

}  // namespace

bool prepare_sample(const Event& event, SampleData& data) {
  const std::uint64_t type = event.attr.sample_type;
  std::uint64_t size = sizeof(perf_event_header) + event.header_size + event.id_header_size;
  if (type & PERF_SAMPLE_READ) {
    data.read_members = (event.attr.read_format & PERF_FORMAT_GROUP)
                            ? event.leader.load(std::memory_order_acquire)->nr_members.load()
                            : 1;
    size += abi::read_format_size(event.attr.read_format, data.read_members);
  }
  if (data.callchain_nr > callchain_limit(event)) data.callchain_nr = callchain_limit(event);
  if (event.attr.exclude_callchain_user) data.callchain_nr = kernel_part(data);
  if (type & PERF_SAMPLE_CALLCHAIN) size += sizeof(std::uint64_t) * (1 + data.callchain_nr);
  if (type & PERF_SAMPLE_RAW) {
    data.raw_bytes = data.raw != nullptr ? data.raw->prepare() : 2 * sizeof(std::uint32_t);
    if (data.raw_bytes == 0) return false;
    size += data.raw_bytes;
  }
  if (type & PERF_SAMPLE_BRANCH_STACK) size += sizeof(std::uint64_t);  // no PMU supplies one
  if (type & PERF_SAMPLE_REGS_USER) size += regs_bytes(data.regs_user, event.attr.sample_regs_user);
  if (type & PERF_SAMPLE_REGS_INTR) size += regs_bytes(data.regs_intr, event.attr.sample_regs_intr);
  if (type & PERF_SAMPLE_AUX) size += sizeof(std::uint64_t);  // the size field; data below
  if (size > abi::kMaxAlignedRecord) return false;
  if (type & PERF_SAMPLE_STACK_USER) {
    // perf_sample_ustack_size: no user regs, no dump; otherwise what still fits under 64 KiB.
    std::uint64_t stack = 0;
    if (data.regs_user != nullptr && data.regs_user->abi != PERF_SAMPLE_REGS_ABI_NONE) {
      const std::uint64_t room = abi::kMaxAlignedRecord - size;
      const std::uint64_t fit = room >= 3 * sizeof(std::uint64_t)
                                    ? (room - 2 * sizeof(std::uint64_t)) & ~std::uint64_t{7}
                                    : 0;
      stack = std::min<std::uint64_t>(event.attr.sample_stack_user, fit);
    }
    data.stack_size = stack;
    data.stack_dyn = std::min(stack, data.stack_user.sp != nullptr ? data.stack_user.available : 0);
    size += stack != 0 ? 2 * sizeof(std::uint64_t) + stack : sizeof(std::uint64_t);
  }
  if (type & PERF_SAMPLE_CODE_PAGE_SIZE) {
    if (data.code_page_size == 0 && data.ip != 0) data.code_page_size = ring::page_size();
  }
  if (type & PERF_SAMPLE_DATA_PAGE_SIZE) {
    if (data.data_page_size == 0 && data.addr != 0) data.data_page_size = ring::page_size();
  }
  if (type & PERF_SAMPLE_AUX) size = size_aux_field(event, data, size);
  data.size = static_cast<std::uint32_t>(size);
  return true;
}

void write_sample_id(ring::OutputHandle& h, const Event& event, const SampleId& id) {
  const std::uint64_t type = event.attr.sample_type;
  if (type & PERF_SAMPLE_TID) {
    h.put(id.pid);
    h.put(id.tid);
  }
  if (type & PERF_SAMPLE_TIME) h.put(id.time);
  if (type & PERF_SAMPLE_ID) h.put(event.primary_id.load(std::memory_order_relaxed));
  if (type & PERF_SAMPLE_STREAM_ID) h.put(stream_id(event));
  if (type & PERF_SAMPLE_CPU) {
    h.put(id.cpu);
    h.put(std::uint32_t{0});
  }
  if (type & PERF_SAMPLE_IDENTIFIER) h.put(event.primary_id.load(std::memory_order_relaxed));
}

ring::OutputStatus output_begin(ring::OutputHandle& h, Event& event, std::uint32_t size,
                                const SampleId& id) {
  ring::DataRing* rb = event.rb.load(std::memory_order_acquire);
  if (rb == nullptr) return ring::OutputStatus::kNoDataArea;
  const std::uint32_t trailer = event.attr.sample_id_all ? event.id_header_size : 0;
  const std::uint32_t lost_size = sizeof(perf_event_header) + kLostBodySize + trailer;
  const ring::OutputStatus status = h.begin(*rb, size, lost_size);
  if (status == ring::OutputStatus::kLost || status == ring::OutputStatus::kTooManyWriters) {
    event.lost_samples.fetch_add(1, std::memory_order_relaxed);
    return ring::OutputStatus::kLost;
  }
  if (status != ring::OutputStatus::kOk) return status;
  if (h.lost() != 0) {
    const perf_event_header header{PERF_RECORD_LOST, 0, static_cast<std::uint16_t>(lost_size)};
    h.put(header);
    h.put(event.id);
    h.put(h.lost());
    if (event.attr.sample_id_all) write_sample_id(h, event, id);
  }
  return ring::OutputStatus::kOk;
}

void count_lost_sample(Event& event) {
  event.lost_samples.fetch_add(1, std::memory_order_relaxed);
  if (ring::DataRing* rb = event.rb.load(std::memory_order_acquire)) rb->add_lost(1);
}

namespace {

// The header and the head words (sample_plan.hpp): straight into the ring when the record's head
// does not wrap, word by word through the handle when it does.
void write_head(ring::OutputHandle& h, const SamplePlan& plan, const SampleData& data) {
  const std::uint64_t header = std::uint64_t{PERF_RECORD_SAMPLE} |
                               std::uint64_t{data.cpumode} << 32 | std::uint64_t{data.size} << 48;
  const auto* base = reinterpret_cast<const std::uint8_t*>(&data);
  // Copied out first: the stores into ring memory (bytes) may alias anything for the compiler.
  const std::uint32_t words = plan.head_words;
  const std::array<std::uint16_t, 9> offsets = plan.head_offsets;
  auto word = [&](std::uint32_t i) {
    std::uint64_t value;
    std::memcpy(&value, base + offsets[i], sizeof value);
    return value;
  };
  if (std::uint8_t* dst = h.contiguous(plan.head_size)) {
    std::memcpy(dst, &header, sizeof header);
    for (std::uint32_t i = 0; i < words; ++i) {
      const std::uint64_t value = word(i);
      std::memcpy(dst + 8 * (i + 1), &value, sizeof value);
    }
    return;
  }
  h.put(header);
  for (std::uint32_t i = 0; i < words; ++i) h.put(word(i));
}

// Every field after PERIOD, in perf_output_sample's order, as prepare_sample sized them.
void write_tail(ring::OutputHandle& h, Event& event, SampleData& data,
                std::optional<AuxSampleScope>& aux) {
  const std::uint64_t type = event.attr.sample_type;
  if (type & PERF_SAMPLE_READ) emit_read_values(h, event, data.time, data.read_members);
  if (type & PERF_SAMPLE_CALLCHAIN) {
    h.put(data.callchain_nr);
    h.copy(data.callchain, sizeof(std::uint64_t) * data.callchain_nr);
  }
  if (type & PERF_SAMPLE_RAW) {
    if (data.raw != nullptr) {
      h.put(data.raw->size);
      for (const RawFragment* f = &data.raw->frag; f != nullptr; f = f->next) {
        if (f->copy != nullptr) {
          h.copy_custom(f->copy, f->data, f->size);
        } else {
          h.copy(f->data, f->size);
        }
      }
      h.zero(data.raw->pad);  // the kernel leaves stale ring bytes here; we do not leak them
    } else {
      h.put(std::uint32_t{4});
      h.put(std::uint32_t{0});
    }
  }
  if (type & PERF_SAMPLE_BRANCH_STACK) h.put(std::uint64_t{0});
  if (type & PERF_SAMPLE_REGS_USER) write_regs(h, data.regs_user, event.attr.sample_regs_user);
  if (type & PERF_SAMPLE_STACK_USER) {
    h.put(data.stack_size);
    if (data.stack_size != 0) {
      h.copy_custom(copy_stack_bytes, data.stack_user.sp, data.stack_dyn);
      h.zero(data.stack_size - data.stack_dyn);
      h.put(data.stack_dyn);
    }
  }
  if (type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) h.put(data.weight);
  if (type & PERF_SAMPLE_DATA_SRC) h.put(data.data_src);
  if (type & PERF_SAMPLE_TRANSACTION) h.put(data.transaction);
  if (type & PERF_SAMPLE_REGS_INTR) write_regs(h, data.regs_intr, event.attr.sample_regs_intr);
  if (type & PERF_SAMPLE_PHYS_ADDR) h.put(data.phys_addr);
  if (type & PERF_SAMPLE_CGROUP) h.put(data.cgroup);
  if (type & PERF_SAMPLE_DATA_PAGE_SIZE) h.put(data.data_page_size);
  if (type & PERF_SAMPLE_CODE_PAGE_SIZE) h.put(data.code_page_size);
  if (type & PERF_SAMPLE_AUX) aux->output(h, data.aux_copy, data.aux_size);
}

}  // namespace

int output_sample(Event& event, SampleData& data) {
  const SamplePlan& plan = event.plan;
  // Holds the group leader's AUX area from sizing to copy (PERF_SAMPLE_AUX only).
  std::optional<AuxSampleScope> aux;
  if (!plan.has_tail) {
    data.size = plan.head_size;
  } else {
    if (event.attr.sample_type & PERF_SAMPLE_AUX) {
      aux.emplace(event);
      data.aux_available = aux->available();
    }
    if (plan.aux_tail) {
      // The head words, the AUX size word and its data: nothing else to size.
      data.size = static_cast<std::uint32_t>(
          size_aux_field(event, data, plan.head_size + sizeof(std::uint64_t)));
    } else if (!prepare_sample(event, data)) {
      // Refused rather than truncated into a corrupt stream.
      count_lost_sample(event);
      return -E2BIG;
    }
  }
  data.id = event.primary_id.load(std::memory_order_relaxed);
  data.stream_id = stream_id(event);
  const SampleId id{data.pid, data.tid, data.time, data.cpu};
  ring::OutputHandle h;
  const ring::OutputStatus status = output_begin(h, event, data.size, id);
  if (status != ring::OutputStatus::kOk) return -ENOSPC;
  write_head(h, plan, data);
  if (plan.aux_tail) {
    aux->output(h, data.aux_copy, data.aux_size);
  } else if (plan.has_tail) {
    write_tail(h, event, data, aux);
  }
  if (!event.attr.watermark) h.count_sample(event.attr.wakeup_events);
  h.end();
  return 0;
}

int output_sideband(Event& event, std::uint32_t type, std::uint16_t misc, const void* body,
                    std::uint32_t body_size, const SampleId& id) {
  const std::uint32_t padded = static_cast<std::uint32_t>(abi::align8(body_size));
  const std::uint32_t trailer = event.attr.sample_id_all ? event.id_header_size : 0;
  const std::uint32_t size = sizeof(perf_event_header) + padded + trailer;
  if (size > abi::kMaxAlignedRecord) return -E2BIG;
  ring::OutputHandle h;
  if (output_begin(h, event, size, id) != ring::OutputStatus::kOk) return -ENOSPC;
  const perf_event_header header{type, misc, static_cast<std::uint16_t>(size)};
  h.put(header);
  h.copy(body, body_size);
  h.zero(padded - body_size);
  if (event.attr.sample_id_all) write_sample_id(h, event, id);
  h.end();
  return 0;
}

}  // namespace userperf::core
