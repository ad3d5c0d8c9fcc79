# userperf_bpf_objects(TARGET OUTPUT_DIR <dir> SOURCES <x.bpf.c>...): compiles each BPF C source
# with clang (-O2 -g -target bpf -mcpu=v3, as libbpf users do) into <dir>/<x>.bpf.o, built with ALL.
# Plain -target bpf does not find <asm/types.h>: add the multiarch include directory (Debian's
# x86_64-linux-gnu, which CMake found; clang's -dumpmachine says x86_64-pc-linux-gnu instead).
find_program(USERPERF_CLANG clang REQUIRED)
if(CMAKE_LIBRARY_ARCHITECTURE)
  set(USERPERF_TRIPLET ${CMAKE_LIBRARY_ARCHITECTURE})
else()
  execute_process(COMMAND ${CMAKE_C_COMPILER} -dumpmachine OUTPUT_VARIABLE USERPERF_TRIPLET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()

function(userperf_bpf_objects target)
  cmake_parse_arguments(ARG "" "OUTPUT_DIR" "SOURCES" ${ARGN})
  set(outputs)
  foreach(source ${ARG_SOURCES})
    get_filename_component(source ${source} ABSOLUTE)
    get_filename_component(name ${source} NAME)
    string(REGEX REPLACE "\\.c$" ".o" object ${name})
    set(output ${ARG_OUTPUT_DIR}/${object})
    add_custom_command(
      OUTPUT ${output}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${ARG_OUTPUT_DIR}
      COMMAND ${USERPERF_CLANG} -O2 -g -target bpf -mcpu=v3 -Wall -Werror
              -I/usr/include/${USERPERF_TRIPLET} -I${PROJECT_SOURCE_DIR}/tests/data/bpf/include
              -c ${source} -o ${output}
      DEPENDS ${source}
      COMMENT "clang -target bpf ${name}"
      VERBATIM)
    list(APPEND outputs ${output})
  endforeach()
  add_custom_target(${target} ALL DEPENDS ${outputs})
endfunction()
