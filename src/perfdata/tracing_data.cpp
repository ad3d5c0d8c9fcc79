#include "perfdata/tracing_data.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace userperf::perfdata {

namespace {

constexpr std::uint8_t kMagic[] = {23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
constexpr char kVersion[] = "0.6";  // 0.6: saved cmdlines follow printk

void put_bytes(std::vector<std::uint8_t>& out, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  out.insert(out.end(), bytes, bytes + size);
}
template <class T>
void put(std::vector<std::uint8_t>& out, T value) {
  put_bytes(out, &value, sizeof value);
}
void put_cstring(std::vector<std::uint8_t>& out, const std::string& text) {
  put_bytes(out, text.c_str(), text.size() + 1);
}
// A "file" of the body: u64 size then the text.
void put_file(std::vector<std::uint8_t>& out, const std::string& text) {
  put<std::uint64_t>(out, text.size());
  put_bytes(out, text.data(), text.size());
}

// tracefs events/header_page: the ring-buffer page header. libtraceevent takes the size of
// `commit` as the kernel's long size and the offset of `data` as the page header size.
std::string header_page_text(std::uint32_t page_size) {
  return "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
         "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
         "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
         "\tfield: char data;\toffset:16;\tsize:" +
         std::to_string(page_size - 16) + ";\tsigned:1;\n";
}

// tracefs events/header_event: the ring-buffer event header (perf skips it).
const char kHeaderEvent[] =
    "# compressed entry header\n"
    "\ttype_len    :    5 bits\n"
    "\ttime_delta  :   27 bits\n"
    "\tarray       :   32 bits\n"
    "\n"
    "\tpadding     : type == 29\n"
    "\ttime_extend : type == 30\n"
    "\ttime_stamp : type == 31\n"
    "\tdata max type_len  == 28\n";

}  // namespace

std::vector<std::uint8_t> encode_tracing_data(const std::vector<TracepointFormat>& formats) {
  std::vector<std::uint8_t> out;
  const auto page_size = static_cast<std::uint32_t>(sysconf(_SC_PAGESIZE));
  put_bytes(out, kMagic, sizeof kMagic);
  put_cstring(out, kVersion);
  const std::uint16_t probe = 1;
  std::uint8_t little = 0;
  std::memcpy(&little, &probe, 1);
  put<std::uint8_t>(out, little == 1 ? 0 : 1);
  put<std::uint8_t>(out, sizeof(long));
  put<std::uint32_t>(out, page_size);

  put_cstring(out, "header_page");
  put_file(out, header_page_text(page_size));
  put_cstring(out, "header_event");
  put_file(out, kHeaderEvent);

  put<std::uint32_t>(out, 0);  // ftrace's own events (function, print, ...): none

  std::vector<std::string> systems;
  for (const TracepointFormat& f : formats) {
    if (std::find(systems.begin(), systems.end(), f.system) == systems.end()) {
      systems.push_back(f.system);
    }
  }
  put<std::uint32_t>(out, static_cast<std::uint32_t>(systems.size()));
  for (const std::string& system : systems) {
    put_cstring(out, system);
    const auto count = std::count_if(formats.begin(), formats.end(),
                                     [&](const TracepointFormat& f) { return f.system == system; });
    put<std::uint32_t>(out, static_cast<std::uint32_t>(count));
    for (const TracepointFormat& f : formats) {
      if (f.system == system) put_file(out, f.format);
    }
  }

  put<std::uint32_t>(out, 0);  // kallsyms
  put<std::uint32_t>(out, 0);  // printk formats
  put<std::uint64_t>(out, 0);  // saved cmdlines
  return out;
}

}  // namespace userperf::perfdata
