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

bool has_regs(const SampleRegs* regs) {
  return regs != nullptr && regs->abi != PERF_SAMPLE_REGS_ABI_NONE;
}

std::uint64_t regs_bytes(const SampleRegs* regs, std::uint64_t mask) {
  if (!has_regs(regs)) return sizeof(std::uint64_t);
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
std::uint64_t kernel_part(const SampleExtras& extra, std::uint64_t nr) {
  for (std::uint64_t i = 0; i < nr; ++i) {
    if (extra.callchain[i] == PERF_CONTEXT_USER) return i;
  }
  return nr;
}

std::uint64_t stream_id(const Event& event) {
  return event.id;
}

// The bytes the RAW field takes (4 + payload + padding, or 8 when the PMU has none); 0 when the
// payload cannot fit in any record.
std::uint64_t raw_field_bytes(const SampleData& data) {
  return data.raw != nullptr ? data.raw->prepare() : 2 * sizeof(std::uint32_t);
}

// PERF_SAMPLE_AUX's data, last in the record: what still fits under the 16-bit record size after
// the `size` bytes before it (its size word included), rounded down to 8 (perf_prepare_sample).
// Returns the record's size with it.
std::uint64_t size_aux_field(const Event& event, PreparedSample& prepared, std::uint64_t size) {
  const std::uint64_t room = size < 0xffff ? (0xffff - size) & ~std::uint64_t{7} : 0;
  prepared.aux_copy =
      std::min<std::uint64_t>({event.attr.aux_sample_size, room, prepared.aux_available});
  prepared.aux_size = abi::align8(prepared.aux_copy);
  return size + prepared.aux_size;
}

}  // namespace

bool prepare_sample(const Event& event, const SampleData& data, PreparedSample& prepared) {
  const std::uint64_t type = event.attr.sample_type;
  const SampleExtras& extra = data.extra();
  std::uint64_t size = sizeof(perf_event_header) + event.header_size + event.id_header_size;
  if (type & PERF_SAMPLE_READ) {
    prepared.read_members = (event.attr.read_format & PERF_FORMAT_GROUP)
                                ? event.leader.load(std::memory_order_acquire)->nr_members.load()
                                : 1;
    size += abi::read_format_size(event.attr.read_format, prepared.read_members);
  }
  if (type & PERF_SAMPLE_CALLCHAIN) {
    std::uint64_t nr = std::min(extra.callchain_nr, callchain_limit(event));
    if (event.attr.exclude_callchain_user) nr = kernel_part(extra, nr);
    prepared.callchain_nr = nr;
    size += sizeof(std::uint64_t) * (1 + nr);
  }
  if (type & PERF_SAMPLE_RAW) {
    prepared.raw_bytes = raw_field_bytes(data);
    if (prepared.raw_bytes == 0) return false;
    size += prepared.raw_bytes;
  }
  if (type & PERF_SAMPLE_BRANCH_STACK) size += sizeof(std::uint64_t);  // no PMU supplies one
  if (type & PERF_SAMPLE_REGS_USER)
    size += regs_bytes(extra.regs_user, event.attr.sample_regs_user);
  if (type & PERF_SAMPLE_REGS_INTR)
    size += regs_bytes(extra.regs_intr, event.attr.sample_regs_intr);
  if (type & PERF_SAMPLE_AUX) size += sizeof(std::uint64_t);  // the size field; data below
  if (size > abi::kMaxAlignedRecord) return false;
  if (type & PERF_SAMPLE_STACK_USER) {
    // perf_sample_ustack_size: no user regs, no dump; otherwise what still fits under 64 KiB.
    std::uint64_t stack = 0;
    if (has_regs(extra.regs_user)) {
      const std::uint64_t room = abi::kMaxAlignedRecord - size;
      const std::uint64_t fit = room >= 3 * sizeof(std::uint64_t)
                                    ? (room - 2 * sizeof(std::uint64_t)) & ~std::uint64_t{7}
                                    : 0;
      stack = std::min<std::uint64_t>(event.attr.sample_stack_user, fit);
    }
    prepared.stack_size = stack;
    prepared.stack_dyn =
        std::min(stack, extra.stack_user.sp != nullptr ? extra.stack_user.available : 0);
    size += stack != 0 ? 2 * sizeof(std::uint64_t) + stack : sizeof(std::uint64_t);
  }
  if (type & PERF_SAMPLE_AUX) size = size_aux_field(event, prepared, size);
  prepared.size = static_cast<std::uint32_t>(size);
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
  ring::DataRing* rb = event.output_ring();
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
  if (ring::DataRing* rb = event.output_ring()) rb->add_lost(1);
}

namespace {

// The header and the head words (sample_plan.hpp): straight into the ring when the record's head
// does not wrap, word by word through the handle when it does.
void write_head(ring::OutputHandle& h, const SamplePlan& plan, const SampleData& data,
                std::uint32_t size) {
  const std::uint64_t header = std::uint64_t{PERF_RECORD_SAMPLE} |
                               std::uint64_t{data.cpumode} << 32 | std::uint64_t{size} << 48;
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

void write_raw(ring::OutputHandle& h, const RawRecord* raw) {
  if (raw == nullptr) {
    h.put(std::uint64_t{4});  // size 4, then four zero bytes
    return;
  }
  h.put(raw->size);
  for (const RawFragment* f = &raw->frag; f != nullptr; f = f->next) {
    if (f->copy != nullptr) {
      h.copy_custom(f->copy, f->data, f->size);
    } else {
      h.copy(f->data, f->size);
    }
  }
  h.zero(raw->pad);  // the kernel leaves stale ring bytes here; we do not leak them
}

// Every field after PERIOD, in perf_output_sample's order, as prepare_sample sized them.
void write_tail(ring::OutputHandle& h, Event& event, const SampleData& data,
                const PreparedSample& prepared, std::optional<AuxSampleScope>& aux) {
  const std::uint64_t type = event.attr.sample_type;
  const SampleExtras& extra = data.extra();
  if (type & PERF_SAMPLE_READ) emit_read_values(h, event, data.time, prepared.read_members);
  if (type & PERF_SAMPLE_CALLCHAIN) {
    h.put(prepared.callchain_nr);
    // No chain (nullptr): nothing to copy, and memcpy must not see a null source.
    if (prepared.callchain_nr != 0) {
      h.copy(extra.callchain, sizeof(std::uint64_t) * prepared.callchain_nr);
    }
  }
  if (type & PERF_SAMPLE_RAW) write_raw(h, data.raw);
  if (type & PERF_SAMPLE_BRANCH_STACK) h.put(std::uint64_t{0});
  if (type & PERF_SAMPLE_REGS_USER) write_regs(h, extra.regs_user, event.attr.sample_regs_user);
  if (type & PERF_SAMPLE_STACK_USER) {
    h.put(prepared.stack_size);
    if (prepared.stack_size != 0) {
      h.copy_custom(copy_stack_bytes, extra.stack_user.sp, prepared.stack_dyn);
      h.zero(prepared.stack_size - prepared.stack_dyn);
      h.put(prepared.stack_dyn);
    }
  }
  if (type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) h.put(extra.weight);
  if (type & PERF_SAMPLE_DATA_SRC) h.put(extra.data_src);
  if (type & PERF_SAMPLE_TRANSACTION) h.put(extra.transaction);
  if (type & PERF_SAMPLE_REGS_INTR) write_regs(h, extra.regs_intr, event.attr.sample_regs_intr);
  if (type & PERF_SAMPLE_PHYS_ADDR) h.put(extra.phys_addr);
  if (type & PERF_SAMPLE_CGROUP) h.put(extra.cgroup);
  // perf_prepare_sample's defaults: the page size of a known address.
  auto page_size_of = [](std::uint64_t given, std::uint64_t address) -> std::uint64_t {
    return given != 0 || address == 0 ? given : ring::page_size();
  };
  if (type & PERF_SAMPLE_DATA_PAGE_SIZE) h.put(page_size_of(extra.data_page_size, data.addr));
  if (type & PERF_SAMPLE_CODE_PAGE_SIZE) h.put(page_size_of(extra.code_page_size, data.ip));
  if (type & PERF_SAMPLE_AUX) aux->output(h, prepared.aux_copy, prepared.aux_size);
}

}  // namespace

int output_sample(Event& event, SampleData& data) {
  const SamplePlan& plan = event.plan;
  // Holds the group leader's AUX area from sizing to copy (PERF_SAMPLE_AUX only).
  std::optional<AuxSampleScope> aux;
  PreparedSample prepared;
  std::uint32_t size = plan.head_size;
  switch (plan.tail) {
    case SamplePlan::Tail::kNone:
      break;
    case SamplePlan::Tail::kRaw:
      prepared.raw_bytes = raw_field_bytes(data);
      size += static_cast<std::uint32_t>(prepared.raw_bytes);
      if (prepared.raw_bytes != 0 && size <= abi::kMaxAlignedRecord) break;
      count_lost_sample(event);  // refused rather than truncated into a corrupt stream
      return -E2BIG;
    case SamplePlan::Tail::kAux:
      // The head words, the AUX size word and its data: nothing else to size.
      aux.emplace(event);
      prepared.aux_available = aux->available();
      size = static_cast<std::uint32_t>(
          size_aux_field(event, prepared, plan.head_size + sizeof(std::uint64_t)));
      break;
    case SamplePlan::Tail::kAny:
      if (event.attr.sample_type & PERF_SAMPLE_AUX) {
        aux.emplace(event);
        prepared.aux_available = aux->available();
      }
      if (!prepare_sample(event, data, prepared)) {
        count_lost_sample(event);
        return -E2BIG;
      }
      size = prepared.size;
      break;
  }
  data.id = event.primary_id.load(std::memory_order_relaxed);
  data.stream_id = stream_id(event);
  const SampleId id{data.pid, data.tid, data.time, data.cpu};
  ring::OutputHandle h;
  const ring::OutputStatus status = output_begin(h, event, size, id);
  if (status != ring::OutputStatus::kOk) return -ENOSPC;
  write_head(h, plan, data, size);
  switch (plan.tail) {
    case SamplePlan::Tail::kNone:
      break;
    case SamplePlan::Tail::kRaw:
      write_raw(h, data.raw);
      break;
    case SamplePlan::Tail::kAux:
      aux->output(h, prepared.aux_copy, prepared.aux_size);
      break;
    case SamplePlan::Tail::kAny:
      write_tail(h, event, data, prepared, aux);
      break;
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
