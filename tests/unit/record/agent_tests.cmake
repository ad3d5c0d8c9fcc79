# The agent's test (agent_test.cpp) plays the recorder for agent_workload.c run with the agent
# preloaded. Included from tests/CMakeLists.txt after the module foreach (which builds unit_record).
# Sanitizer builds skip it: a sanitized agent cannot be preloaded into an unsanitized program.
if(NOT USERPERF_SANITIZE AND TARGET unit_record)
  add_executable(record_agent_workload ${CMAKE_CURRENT_LIST_DIR}/agent_workload.c)
  target_link_libraries(record_agent_workload PRIVATE ${CMAKE_DL_LIBS} pthread)
  target_include_directories(record_agent_workload PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(unit_record PRIVATE userperf_record_protocol userperf_ring)
  target_compile_definitions(
    unit_record PRIVATE USERPERF_AGENT_PATH="$<TARGET_FILE:userperf_agent>"
                        USERPERF_AGENT_WORKLOAD="$<TARGET_FILE:record_agent_workload>")
  add_dependencies(unit_record userperf_agent record_agent_workload)
endif()
