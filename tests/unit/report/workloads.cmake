# The programs tests/unit/report records with perf (workload.c), built with exact flags of their
# own (not the project's, nor a sanitizer's): frame pointers in every function for
# --call-graph fp, none for --call-graph dwarf. Included by tests/CMakeLists.txt after unit_report.
set(report_workload_dir ${CMAKE_BINARY_DIR}/report_workloads)
set(report_workload_source ${CMAKE_CURRENT_LIST_DIR}/workload.c)
add_custom_command(
  OUTPUT ${report_workload_dir}/workload_fp ${report_workload_dir}/workload_dwarf
  COMMAND ${CMAKE_COMMAND} -E make_directory ${report_workload_dir}
  COMMAND ${CMAKE_C_COMPILER} -O1 -fno-omit-frame-pointer -DLEAF_FRAMES
          -o ${report_workload_dir}/workload_fp ${report_workload_source}
  COMMAND ${CMAKE_C_COMPILER} -O1 -fomit-frame-pointer
          -o ${report_workload_dir}/workload_dwarf ${report_workload_source}
  DEPENDS ${report_workload_source}
  COMMENT "report test workloads")
add_custom_target(report_workloads DEPENDS ${report_workload_dir}/workload_fp
                                           ${report_workload_dir}/workload_dwarf)
add_dependencies(unit_report report_workloads)
target_link_libraries(unit_report PRIVATE userperf_report)
target_compile_definitions(unit_report PRIVATE
                           USERPERF_REPORT_WORKLOAD_DIR="${report_workload_dir}")
# A shared object linked by lld (segments at p_vaddr != p_offset) that the dwarf unwinding test
# loads and calls through; without clang and ld.lld the test skips.
find_program(REPORT_CLANG clang)
find_program(REPORT_LLD ld.lld)
set(report_lld_library "")
if(REPORT_CLANG AND REPORT_LLD)
  set(report_lld_library ${report_workload_dir}/liblld_callee.so)
  add_custom_command(
    OUTPUT ${report_lld_library}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${report_workload_dir}
    COMMAND ${REPORT_CLANG} -O1 -fomit-frame-pointer -fPIC -shared -fuse-ld=lld
            -o ${report_lld_library} ${CMAKE_CURRENT_LIST_DIR}/lld_callee.c
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/lld_callee.c
    COMMENT "report test lld-linked library")
  add_custom_target(report_lld_library DEPENDS ${report_lld_library})
  add_dependencies(unit_report report_lld_library)
endif()
target_compile_definitions(unit_report PRIVATE USERPERF_REPORT_LLD_LIBRARY="${report_lld_library}")
target_link_libraries(unit_report PRIVATE ${CMAKE_DL_LIBS})
