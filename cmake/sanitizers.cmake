# Sanitizer defaults compiled into every sanitized program (fabricbench, the
# test binaries, the fuzzers): the suppressions of tests/sanitizers/lsan.supp
# and tsan.supp and the options that make a finding fail. Hooks of a
# runtime that is not linked in are never called. A rank
# that mpirun starts from a test is then checked like the test itself, with
# no environment to pass along.
file(READ ${PROJECT_SOURCE_DIR}/tests/sanitizers/lsan.supp FB_LSAN_SUPPRESSIONS)
file(READ ${PROJECT_SOURCE_DIR}/tests/sanitizers/tsan.supp FB_TSAN_SUPPRESSIONS)
configure_file(${PROJECT_SOURCE_DIR}/tests/sanitizers/defaults.cpp.in ${PROJECT_BINARY_DIR}/sanitizer_defaults.cpp @ONLY)
add_library(fb_sanitizer_defaults OBJECT ${PROJECT_BINARY_DIR}/sanitizer_defaults.cpp)
# An object, not an archive member: the runtime only looks the hooks up, and
# nothing would pull them out of a static library.
target_sources(fb_core INTERFACE $<TARGET_OBJECTS:fb_sanitizer_defaults>)
