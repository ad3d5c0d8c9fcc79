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
