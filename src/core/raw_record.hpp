// Raw payloads built from non-linear fragments (the kernel's perf_raw_frag / perf_raw_record,
// 2016): a chain of fragments, each bytes or a copy callback. The size and padding are computed
// once by prepare() and reused when the record is written; every payload byte is copied once.
#pragma once

#include <cstdint>

#include "ring/output_handle.hpp"

namespace userperf::core {

struct RawFragment {
  const void* data = nullptr;
  std::uint32_t size = 0;
  ring::CopyFn copy = nullptr;        // nullptr: the bytes at `data` are copied as they are
  const RawFragment* next = nullptr;  // nullptr ends the chain
};

struct RawRecord {
  RawFragment frag;        // the first fragment, embedded as in the kernel
  std::uint32_t size = 0;  // payload + padding, so that 4 + size is a multiple of 8 (the u32 field)
  std::uint32_t pad = 0;   // padding bytes after the payload (written as zeros)

  // Sums the chain and sets size and pad. Returns the bytes the RAW field takes in a sample
  // (4 + size), or 0 when the payload cannot fit in any record (the sample is then refused).
  std::uint64_t prepare();
};

}  // namespace userperf::core
