#!/usr/bin/env bash
# cmake/build_identity.cmake marks a build dirty (--version, every record's
# header) for changed tracked files and, since it missed them before, for
# files git does not track among the binary's sources; records and other
# untracked files elsewhere in the checkout do not count. Runs on a fresh
# clone of the checkout's HEAD.
#   build_identity_test.sh SOURCE_DIR
set -u
src=${1:?usage: build_identity_test.sh SOURCE_DIR}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
git clone -q "$src" "$dir/repo" || { echo "FAIL: git clone $src"; exit 1; }
failures=0
expect() {  # NAME true|false
  cmake -DSRC="$dir/repo" -DOUT="$dir/id.hpp" -P "$src/cmake/build_identity.cmake" || { echo "FAIL $1: cmake -P"; failures=$((failures + 1)); return; }
  if grep -q "kGitDirty = $2;" "$dir/id.hpp"; then echo "ok   $1"; else
    echo "FAIL $1: expected kGitDirty = $2 in: $(cat "$dir/id.hpp")"
    failures=$((failures + 1))
  fi
}
expect "a clean clone" false
echo '{"type":"run"}' >"$dir/repo/results-of-mine.jsonl"
expect "an untracked record outside the sources" false
echo 'int x;' >"$dir/repo/src/core/new_file.cpp"
expect "an untracked source file" true
rm "$dir/repo/src/core/new_file.cpp"
expect "the source file removed again" false
echo '# more' >>"$dir/repo/CMakeLists.txt"
expect "a tracked file changed" true
[ "$failures" -eq 0 ]
