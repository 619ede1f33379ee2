#!/usr/bin/env bash
# scripts/lib/phases.sh, which holds CI's phases to their ceilings: a phase
# past its ceiling fails under CI (and only there), a phase with no ceiling
# fails, a failing command's status comes through, and each phase is logged.
#   phases_test.sh SOURCE_DIR
set -u
# The scripts that run this test may export their own prefix (sanitize.sh: FB_PHASE_PREFIX=sanitize).
unset FB_PHASE_PREFIX
source "${1:?usage: phases_test.sh SOURCE_DIR}/scripts/lib/phases.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export FABRICBENCH_PHASE_LOG=$dir/log
failures=0
expect() {  # NAME EXPECTED_STATUS ACTUAL_STATUS
  if [ "$2" = "$3" ]; then echo "ok   $1"; else
    echo "FAIL $1: status $3, expected $2"
    failures=$((failures + 1))
  fi
}
FB_CEILING_S[quick]=60
FB_CEILING_S[slow]=0
unset CI
phase quick true 2>/dev/null; expect "a phase within its ceiling" 0 $?
phase slow sleep 1 2>/dev/null; expect "past its ceiling outside CI: only said" 0 $?
CI=1 phase slow sleep 1 2>"$dir/err"; expect "past its ceiling in CI: fails" 1 $?
# `sleep 1` spans one or two whole-second ticks of the clock phases.sh reads: 1 or 2 s.
grep -Eq "phase 'slow' took [12] s, past its ceiling of 0 s" "$dir/err" || { echo "FAIL: no message naming the phase: $(cat "$dir/err")"; failures=$((failures + 1)); }
CI=1 phase quick sh -c 'exit 7' 2>/dev/null; expect "a failing command's status" 7 $?
phase nameless true 2>/dev/null; expect "a phase with no ceiling" 1 $?
[ "$(cut -f1 "$dir/log" | tr '\n' ' ')" = "quick slow slow quick " ] || { echo "FAIL: log: $(cat "$dir/log")"; failures=$((failures + 1)); }

# ctest_by_label runs every label and names the failed tests at the end, where CI's kept tail shows them,
# after what each printed last.
mkdir -p "$dir/proj"
cat >"$dir/proj/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(labels NONE)
enable_testing()
add_test(NAME first_fails COMMAND sh -c "printf '\\033[0;31m[  FAILED  ] \\033[mSuite.Case\\nwhy it failed\\n'; exit 3")
set_tests_properties(first_fails PROPERTIES LABELS early)
add_test(NAME says_why COMMAND sh -c "echo 'a_test.cpp:7: Failure'; echo 'Expected: (x) < (3.0), actual: 4.1 vs 3'; echo '[  FAILED  ] A.B'; i=0; while [ \$i -lt 40 ]; do echo later; i=\$((i+1)); done; exit 1")
set_tests_properties(says_why PROPERTIES LABELS early)
add_test(NAME passes_by_its_output COMMAND sh -c "echo 'x.cpp:1: Failure'; echo matched")
set_tests_properties(passes_by_its_output PROPERTIES LABELS early PASS_REGULAR_EXPRESSION matched)
add_test(NAME later_passes COMMAND true)
set_tests_properties(later_passes PROPERTIES LABELS late)
CMAKE
cmake -S "$dir/proj" -B "$dir/proj/build" >/dev/null || { echo "FAIL: the scratch project did not configure"; exit 1; }
FB_CEILING_S[tests:early]=60
FB_CEILING_S[tests:late]=60
ctest_by_label "$dir/proj/build" 1 >"$dir/out" 2>"$dir/err"; expect "a label with a failed test fails the run" 8 $?
grep -q "later_passes" "$dir/out" || { echo "FAIL: the label after the failure did not run: $(cat "$dir/out")"; failures=$((failures + 1)); }
tail -n 2 "$dir/err" | grep -q "^  early: first_fails says_why $" ||
  { echo "FAIL: the end of stderr does not name the failed test: $(cat "$dir/err")"; failures=$((failures + 1)); }
# ...and what the failed test printed last, colours removed, with the gtest case that failed.
grep -q "^--- first_fails (Test Failed.)$" "$dir/err" && grep -q "^\[  FAILED  \] Suite.Case$" "$dir/err" &&
  grep -q "^  | why it failed$" "$dir/err" ||
  { echo "FAIL: no digest of the failed test's output: $(cat "$dir/err")"; failures=$((failures + 1)); }
# A gtest failure's lines, however far above the tail they were printed.
grep -q "^  ! a_test.cpp:7: Failure$" "$dir/err" && grep -q "^  ! Expected: (x) < (3.0), actual: 4.1 vs 3$" "$dir/err" ||
  { echo "FAIL: the digest does not say why says_why failed: $(cat "$dir/err")"; failures=$((failures + 1)); }
grep -q "^  ! \[  FAILED" "$dir/err" && { echo "FAIL: the failure's lines run on past it: $(cat "$dir/err")"; failures=$((failures + 1)); }
grep -q "later_passes\|passes_by_its_output\|x.cpp" "$dir/err" &&
  { echo "FAIL: a passed test is in the digest: $(cat "$dir/err")"; failures=$((failures + 1)); }
[ "$failures" -eq 0 ]
