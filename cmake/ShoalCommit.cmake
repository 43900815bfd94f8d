# Run at every build (cmake -P), not at configure time: a tree rebuilt after
# `git pull` or a local commit must report the commit its code came from in
# shoal_commit(), shoal-bench's header and its JSON and CSV. "-dirty" marks
# a build with uncommitted changes to tracked files, so figures taken from an
# experiment are not credited to a commit. The header is rewritten only when
# its text changes, so an unchanged commit recompiles nothing.
#   cmake -DSOURCE_DIR=<repository> -DOUTPUT=<header> -P ShoalCommit.cmake
execute_process(COMMAND git rev-parse --short HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR NOT commit)
  set(commit "unknown") # a source tarball, or no git
else()
  # No optional locks: trees building at once must not contend for the index.
  execute_process(COMMAND git --no-optional-locks status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE changed OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(changed)
    string(APPEND commit "-dirty")
  endif()
endif()
set(text "/* Written by cmake/ShoalCommit.cmake at build time. */\n#define SHOAL_COMMIT_STRING \"${commit}\"\n")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
