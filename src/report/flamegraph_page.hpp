// The flame graph page's template (flamegraph_page.html, .css, .js in this folder), compiled into
// the library: CMake generates the definitions from the files at build time.
#pragma once

#include <string_view>

namespace userperf::report {

// The HTML with three markers: /*@STYLE@*/ for the style, /*@DATA@*/ for the JSON data object,
// /*@SCRIPT@*/ for the script.
std::string_view flamegraph_page_html();
std::string_view flamegraph_page_css();
std::string_view flamegraph_page_js();

}  // namespace userperf::report
