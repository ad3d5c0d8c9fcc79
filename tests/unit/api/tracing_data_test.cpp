// HEADER_TRACING_DATA end to end (with the C API's tracepoints, hence here): the body's layout,
// and perf 6.1 decoding user tracepoint samples with it: a perf.data whose PERF_TYPE_TRACEPOINT
// attrs carry RAW samples written by the tracepoint PMU, read by `perf script` (fields decoded
// from the formats) and `perf report --stdio`.
#include "perfdata/tracing_data.hpp"

#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "perfdata/writer.hpp"
#include "unit/api/tracepoint_support.hpp"
#include "unit/perfdata/records.hpp"
#include "unit/perfdata/test_files.hpp"
#include "userperf/userperf.h"

USERPERF_TRACEPOINT(myapp, request, (uint64_t, id), (const char*, path), (int32_t, status))
USERPERF_TRACEPOINT(myapp, blob, (int8_t, delta), (userperf_bytes, payload), (uint16_t, port))

namespace userperf::perfdata {
namespace {

// Walks an encoded body the way trace-event-read.c does.
class BodyReader {
 public:
  explicit BodyReader(const std::vector<std::uint8_t>& body) : body_(body) {}
  std::vector<std::uint8_t> bytes(std::size_t n) {
    if (pos_ + n > body_.size()) throw std::runtime_error("past the end");
    std::vector<std::uint8_t> out(body_.begin() + pos_, body_.begin() + pos_ + n);
    pos_ += n;
    return out;
  }
  template <class T>
  T get() {
    T value{};
    const auto b = bytes(sizeof value);
    std::memcpy(&value, b.data(), sizeof value);
    return value;
  }
  std::string cstring() {
    const auto end = std::find(body_.begin() + pos_, body_.end(), 0);
    if (end == body_.end()) throw std::runtime_error("unterminated string");
    std::string s(body_.begin() + pos_, end);
    pos_ += s.size() + 1;
    return s;
  }
  std::string file() {
    const auto size = get<std::uint64_t>();
    const auto b = bytes(size);
    return {b.begin(), b.end()};
  }
  bool at_end() const { return pos_ == body_.size(); }

 private:
  const std::vector<std::uint8_t>& body_;
  std::size_t pos_ = 0;
};

TEST(TracingData, LayoutIsWhatTraceEventReadExpects) {
  const std::vector<TracepointFormat> formats = {
      {"myapp", "a", 1, "format a"}, {"other", "b", 2, "format b"}, {"myapp", "c", 3, "format c"}};
  const std::vector<std::uint8_t> body = encode_tracing_data(formats);
  BodyReader r(body);
  const std::vector<std::uint8_t> magic = {23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
  EXPECT_EQ(r.bytes(10), magic);
  EXPECT_EQ(r.cstring(), "0.6");
  EXPECT_EQ(r.get<std::uint8_t>(), 0);  // little endian
  EXPECT_EQ(r.get<std::uint8_t>(), sizeof(long));
  EXPECT_EQ(r.get<std::uint32_t>(), static_cast<std::uint32_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(r.cstring(), "header_page");
  EXPECT_NE(r.file().find("\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"),
            std::string::npos);
  EXPECT_EQ(r.cstring(), "header_event");
  EXPECT_FALSE(r.file().empty());
  EXPECT_EQ(r.get<std::uint32_t>(), 0u);  // ftrace formats
  ASSERT_EQ(r.get<std::uint32_t>(), 2u);  // systems, in order of first appearance
  EXPECT_EQ(r.cstring(), "myapp");
  ASSERT_EQ(r.get<std::uint32_t>(), 2u);
  EXPECT_EQ(r.file(), "format a");
  EXPECT_EQ(r.file(), "format c");
  EXPECT_EQ(r.cstring(), "other");
  ASSERT_EQ(r.get<std::uint32_t>(), 1u);
  EXPECT_EQ(r.file(), "format b");
  EXPECT_EQ(r.get<std::uint32_t>(), 0u);  // kallsyms
  EXPECT_EQ(r.get<std::uint32_t>(), 0u);  // printk
  EXPECT_EQ(r.get<std::uint64_t>(), 0u);  // saved cmdlines
  EXPECT_TRUE(r.at_end());
}

TEST(TracingData, NoTracepointsIsAValidEmptyBody) {
  const std::vector<std::uint8_t> body = encode_tracing_data({});
  BodyReader r(body);
  r.bytes(10);
  r.cstring();
  r.bytes(6);
  r.cstring();
  r.file();
  r.cstring();
  r.file();
  EXPECT_EQ(r.get<std::uint32_t>(), 0u);
  EXPECT_EQ(r.get<std::uint32_t>(), 0u);
  r.bytes(16);
  EXPECT_TRUE(r.at_end());
}

constexpr std::uint64_t kRequestId = 3000;  // ids of its own: one process may run every api test
constexpr std::uint64_t kBlobId = 3001;
constexpr std::uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                      PERF_SAMPLE_RAW;

// An event of the tracepoint PMU on this thread, as `userperf record` opens them.
struct RecordedTracepoint {
  perf_event_attr attr{};
  int fd = -1;
  std::uint64_t id = 0;
  std::unique_ptr<userperf::testing::MappedRing> ring;

  explicit RecordedTracepoint(std::uint64_t tracepoint_id) {
    attr = userperf::testing::tracepoint_attr(tracepoint_id);
    attr.sample_type = kSampleType;
    attr.exclude_kernel = 1;
    fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
    if (fd < 0) return;
    userperf_ioctl(fd, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id));
    ring = std::make_unique<userperf::testing::MappedRing>(fd, 8);
  }
  ~RecordedTracepoint() {
    ring.reset();
    if (fd >= 0) userperf_close(fd);
  }
};

TEST(TracingData, PerfScriptDecodesUserTracepointFields) {
  if (std::system("perf --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "perf not installed";
  // A strong reference to the tracepoint API: it links the library's userperf_tracepoint_* into
  // this executable, so the descriptors' constructors found them (weak references alone do not
  // pull an archive member).
  ASSERT_EQ(userperf_tracepoint_check(&userperf_tp_myapp_request, nullptr, 0), 0);
  userperf::testing::install_format_log();
  pmu::tracepoint_define(kRequestId, "myapp:request");
  pmu::tracepoint_define(kBlobId, "myapp:blob");
  RecordedTracepoint request(kRequestId), blob(kBlobId);
  ASSERT_GE(request.fd, 0);
  ASSERT_GE(blob.fd, 0);
  ASSERT_TRUE(request.ring->ok() && blob.ring->ok());

  userperf_trace(myapp, request, 5, "/x", -1);
  const std::uint8_t bytes[] = {0xde, 0xad, 0xbe, 0xef};
  userperf_trace(myapp, blob, -3, (userperf_bytes{bytes, sizeof bytes}), 8080);
  userperf_trace(myapp, request, 6, "/y/z", 200);

  testing::TempDir dir;
  const std::string path = dir.file("perf.data");
  auto writer = testing::create_writer(path);
  ASSERT_NE(writer, nullptr);
  const std::uint64_t request_ids[] = {request.id};
  const std::uint64_t blob_ids[] = {blob.id};
  ASSERT_EQ(writer->add_attr(request.attr, request_ids), 0);
  ASSERT_EQ(writer->add_attr(blob.attr, blob_ids), 1);
  testing::RecordBuilder comm(PERF_RECORD_COMM, 0);
  comm.u32(static_cast<std::uint32_t>(getpid()))
      .u32(static_cast<std::uint32_t>(gettid()))
      .string("tp-test");
  ASSERT_TRUE(writer->append(comm.done()));
  std::size_t samples = 0;
  for (auto* ring : {request.ring.get(), blob.ring.get()}) {
    for (const auto& rec : ring->drain()) {
      ASSERT_TRUE(writer->append(rec));
      samples += userperf::testing::record_type(rec) == PERF_RECORD_SAMPLE;
    }
  }
  ASSERT_EQ(samples, 3u);
  ASSERT_TRUE(writer->append_finished_round());
  writer->set_event_name(0, "myapp:request");
  writer->set_event_name(1, "myapp:blob");
  Features& f = writer->features();
  f = Features::of_this_host();
  std::vector<TracepointFormat> formats;
  for (const auto& [id, name] : {std::pair{kRequestId, "request"}, std::pair{kBlobId, "blob"}}) {
    const auto texts = userperf::testing::FormatLog::instance().of(id);
    ASSERT_EQ(texts.size(), 1u);
    formats.push_back({"myapp", name, id, texts[0]});
  }
  f.tracing_data = encode_tracing_data(formats);
  ASSERT_TRUE(writer->finish()) << writer->error().message;

  const testing::PerfRun script = run_perf(dir, "script -i '" + path + "'");
  EXPECT_EQ(script.exit_code, 0) << script.err;
  EXPECT_EQ(script.err, "");
  EXPECT_NE(script.out.find("myapp:request: id=5 path=/x status=-1"), std::string::npos)
      << script.out;
  EXPECT_NE(script.out.find("myapp:request: id=6 path=/y/z status=200"), std::string::npos)
      << script.out;
  EXPECT_NE(script.out.find("myapp:blob: delta=-3 payload=de ad be ef port=8080"),
            std::string::npos)
      << script.out;
  EXPECT_NE(script.out.find("tp-test"), std::string::npos) << script.out;

  const testing::PerfRun report = run_perf(dir, "report --stdio -i '" + path + "'");
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("myapp:request"), std::string::npos) << report.out;
  for (const char* word : {"failed", "Error", "Invalid", "Warning", "cannot find"}) {
    EXPECT_EQ(report.err.find(word), std::string::npos) << report.err;
  }
}

}  // namespace
}  // namespace userperf::perfdata
