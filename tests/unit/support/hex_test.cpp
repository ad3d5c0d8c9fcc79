// The one hex formatter of messages and listings (the script printer, the trace decoders, the
// disassembler, the conformance runner, the map checks): "0x", lower-case digits, no padding.
#include "support/hex.hpp"

#include <gtest/gtest.h>

namespace userperf::support {
namespace {

TEST(Hex, ZeroXAndLowerCaseDigitsWithoutPadding) {
  EXPECT_EQ(hex(0), "0x0");
  EXPECT_EQ(hex(0x7f), "0x7f");
  EXPECT_EQ(hex(0xffffffffu), "0xffffffff");
  EXPECT_EQ(hex(0x8000000000000000ull), "0x8000000000000000");
  EXPECT_EQ(hex(~0ull), "0xffffffffffffffff");
}

}  // namespace
}  // namespace userperf::support
