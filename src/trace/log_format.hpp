// The log format: an application's own records, 8-byte aligned so that a window starting anywhere
// (an overwritten flight recorder, an AUX sample) finds the next record boundary.
//
// Record (little-endian), 16 + round_up(length, 8) bytes:
//   word 0  bits 63..56 magic 0xa7, bits 55..48 check, bits 47..32 length (payload bytes,
//           0..65535), bits 31..0 thread id
//   word 1  timestamp, ns (the event's clock: CLOCK_MONOTONIC by default)
//   (-length & 7) zero bytes, then the payload: the padding goes first so that the source stores
//   a record as two pieces (header with padding, the caller's bytes) without copying the payload.
// check = the low 8 bits of splitmix64(word 0 without check ^ splitmix64(timestamp)).
//
// A decoder looks for the first offset where a valid header starts a chain of valid records
// (up to kLogResyncChain of them, or to the window's end); bytes before it are an earlier record's
// tail. After it, every record must be valid up to the end, where only zero padding may follow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "trace/aux_decoder.hpp"

namespace userperf::trace {

constexpr std::size_t kLogHeaderBytes = 16;
constexpr std::size_t kLogMaxPayload = 65535;
constexpr std::size_t kLogMaxPrefix = kLogHeaderBytes + 7;  // header plus padding
constexpr int kLogResyncChain = 4;

// Writes a record's header and padding into `out` and returns their size (16..23 bytes); the
// payload follows them. length <= kLogMaxPayload.
std::size_t log_record_prefix(std::uint32_t tid, std::uint64_t time, std::size_t length,
                              std::uint8_t (&out)[kLogMaxPrefix]);
inline std::size_t log_record_bytes(std::size_t length) {
  return kLogHeaderBytes + ((length + 7) & ~std::size_t{7});
}

struct LogRecord {
  std::uint32_t tid = 0;
  std::uint64_t time = 0;
  std::string payload;
  std::uint64_t offset = 0;  // byte offset of the record's header in the window
};

// Decodes a window; the first corrupt byte after the first record is corrupt_at its offset
// (records before it stay in `out`). `skipped` (when given) gets the bytes before the first record.
Expected<void> decode_log(std::span<const std::uint8_t> bytes, std::vector<LogRecord>& out,
                          std::uint64_t* skipped = nullptr);

std::unique_ptr<AuxDecoder> make_log_decoder();

}  // namespace userperf::trace
