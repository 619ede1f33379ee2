# Build step (cmake -P): the git commit the binary is built from, and whether
# the tree had changes, into a header that only changes when they do, so
# `fabricbench --version` and every record header say exactly what ran.
#   -DSRC=<source dir> -DOUT=<header path>
find_package(Git QUIET)
set(commit "unknown")
set(dirty "false")
if(GIT_FOUND AND EXISTS "${SRC}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} -C "${SRC}" rev-parse --short=12 HEAD
    OUTPUT_VARIABLE out RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0)
    set(commit "${out}")
    # Changes to tracked files anywhere, and files git does not track (nor
    # ignore) where the binary's sources are: a new .cpp or preset built into
    # it is as much a change as an edited one. Records and build folders
    # elsewhere in the checkout do not count.
    execute_process(COMMAND ${GIT_EXECUTABLE} -C "${SRC}" status --porcelain --untracked-files=no
      OUTPUT_VARIABLE changes RESULT_VARIABLE rc2 ERROR_QUIET)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C "${SRC}" ls-files --others --exclude-standard --
                            src include cmake profiles CMakeLists.txt
      OUTPUT_VARIABLE untracked RESULT_VARIABLE rc3 ERROR_QUIET)
    if((rc2 EQUAL 0 AND NOT changes STREQUAL "") OR (rc3 EQUAL 0 AND NOT untracked STREQUAL ""))
      set(dirty "true")
    endif()
  endif()
endif()
set(text "#pragma once\n// Written by cmake/build_identity.cmake at build time.\nnamespace fb {\ninline constexpr const char* kGitCommit = \"${commit}\";\ninline constexpr bool kGitDirty = ${dirty};\n}  // namespace fb\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
