# Timed phases of the test scripts (scripts/test.sh, scripts/sanitize.sh,
# .ci/run), each held to a ceiling in seconds: what it may take cold on CI's
# machine (2 cores, a fresh clone, no compiler cache). A phase over its
# ceiling fails the run when CI is set, naming the phase, so a new suite or
# a heavier header shows up as the phase that grew, not as a CI run that ends
# past its limit with nobody knowing why. Each ceiling is about twice the
# phase's cold figure of 2026-12-04 (docs/testing.md, "CI time"), with the
# room this round's new suites were given; a label without a ceiling fails
# too: give it one here. Sourced, not run.

# Labels this round adds have theirs already: `double` (the GPU backends
# through the host device double, issue "GPU engine in CI": 6 minutes),
# `docs` (every documented command run as written); the bad-input suite
# joins `mpi` and `fuzz`, the lossy-link test `cluster`, within theirs.
declare -A FB_CEILING_S=(
  [setup]=300                 # Debian packages on a fresh machine
  [build]=900                 # the test tree, every target
  [tests:unit]=240
  [tests:mpi]=600
  [tests:cluster]=600         # RUN_SERIAL measurements on emulated nodes
  [tests:slurm]=180
  [tests:fuzz]=60             # the seeds replayed (an ordinary build)
  [tests:install]=120
  [tests:gpu]=600             # skips with the reason where there is no GPU
  [tests:double]=360          # the GPU backends' code multi-rank through the host device double
  [tests:docs]=300            # not yet: README, docs/*.md and the man page's commands
  [main-job]=240              # scripts/quickstart.sh on the test tree, -e 1M (tests/docs/main_job_test.sh)
  [sanitize-build]=1200       # ASan+UBSan+libFuzzer: unit programs and harnesses
  [sanitize:unit]=420
  [sanitize:fuzz]=360         # every harness for FABRICBENCH_FUZZ_SECONDS
  [sanitize:mpi]=1800         # only with FABRICBENCH_SANITIZE_LABELS naming mpi; not in CI
  [tsan-build]=600
  [tsan:tests]=180
  [total]=3000                # .ci/run as a whole: 50 minutes
)

# phase NAME COMMAND...: runs COMMAND, prints how long it took against its
# ceiling and appends "NAME<TAB>seconds<TAB>ceiling" to FABRICBENCH_PHASE_LOG
# when that is set. Returns COMMAND's status, or 1 when CI is set and the
# phase ran past its ceiling.
phase() {
  local name=$1
  shift
  local ceiling=${FB_CEILING_S[$name]:-}
  if [ -z "$ceiling" ]; then
    echo "phases.sh: phase '$name' has no ceiling: add one to FB_CEILING_S in scripts/lib/phases.sh" >&2
    return 1
  fi
  local start=$SECONDS status=0
  "$@" || status=$?
  local took=$((SECONDS - start))
  printf 'phase %-16s %5d s  (ceiling %d s)\n' "$name" "$took" "$ceiling" >&2
  [ -z "${FABRICBENCH_PHASE_LOG:-}" ] || printf '%s\t%d\t%d\n' "$name" "$took" "$ceiling" >>"$FABRICBENCH_PHASE_LOG"
  [ "$status" -eq 0 ] || return "$status"
  if [ -n "${CI:-}" ] && [ "$took" -gt "$ceiling" ]; then
    echo "phases.sh: phase '$name' took $took s, past its ceiling of $ceiling s: find what grew (ctest's" \
         "per-test times, ninja's .ninja_log) and make it smaller, or raise the ceiling in scripts/lib/phases.sh" \
         "with the reason, keeping .ci/run under 50 minutes" >&2
    return 1
  fi
}

# ctest_by_label BUILD JOBS [ctest arguments]: every label of BUILD's tests
# in turn (each test carries exactly one label), each a phase "PREFIX:LABEL"
# with PREFIX from FB_PHASE_PREFIX (default "tests"). A label left with no
# test by the arguments (-LE gpu) is passed over. All labels run even when
# one fails; the status is the first failure's. The failed tests of every
# label are named again at the end: CI keeps only the log's tail, which
# otherwise shows the last label's passes and not what failed earlier.
ctest_by_label() {
  local build=$1 jobs=$2
  shift 2
  local label status=0 rc n failed="" digest=""
  for label in $(ctest --test-dir "$build" --print-labels | sed -n 's/^  \([a-z0-9_-]*\)$/\1/p'); do
    # Several -L are all required (ctest 3.25): "-L unit" from the caller leaves only that label.
    n=$(ctest --test-dir "$build" -N -L "^$label\$" "$@" | sed -n 's/^Total Tests: //p')
    [ "${n:-0}" -gt 0 ] || continue
    rc=0
    rm -f "$build/Testing/Temporary/LastTestsFailed.log"  # a label over its ceiling names no test of another's
    phase "${FB_PHASE_PREFIX:-tests}:$label" \
      ctest --test-dir "$build" --output-on-failure -j "$jobs" -L "^$label\$" "$@" || rc=$?
    if [ "$rc" -ne 0 ]; then
      failed+="  $label: $(failed_tests "$build")"$'\n'
      digest+=$(failure_digest "$build")$'\n'
    fi
    [ "$status" -ne 0 ] || status=$rc
  done
  [ -z "$digest" ] || printf 'What the failed tests printed last:\n%s' "$digest" >&2
  [ -z "$failed" ] || printf 'Failed, by label:\n%s' "$failed" >&2
  return "$status"
}

# failure_digest BUILD: for each test ctest's last run in BUILD failed, its
# name, the gtest cases that failed, each gtest failure with the lines that
# say why (up to 3 after "file:line: Failure", to the next "[" line) and the
# last lines it printed, colours removed. CI keeps only the log's tail:
# without this a failure in an early label (a flake under load) is named
# but not explained. Passed tests (ctest's "Test Pass Reason:") are left out.
failure_digest() {
  local log=$1/Testing/Temporary/LastTest.log
  [ -f "$log" ] || return 0
  sed 's/\x1b\[[0-9;]*m//g' "$log" | awk -v tail_lines="${FB_DIGEST_LINES:-25}" '
    /^[0-9]+\/[0-9]+ Test: / { name = $3; n = 0; next }
    /^Output:$/ { inside = 1; getline; next }
    /^<end of output>$/ { inside = 0; next }
    inside { out[n++] = $0; next }
    /^Test time/ { next }
    /^Test (Passed|Pass Reason)/ { name = ""; next }
    /^Test / && name != "" {
      print "--- " name " (" $0 ")"
      for (i = 0; i < n; i++) if (out[i] ~ /\[  FAILED  \]/) print out[i]
      for (i = 0; i < n; i++) {
        if (out[i] !~ /:[0-9]+: Failure$/) continue
        print "  ! " out[i]
        for (j = i + 1; j < n && j <= i + 3 && out[j] !~ /^\[/ && out[j] !~ /: Failure$/; j++) print "  ! " out[j]
      }
      for (i = (n > tail_lines ? n - tail_lines : 0); i < n; i++) print "  | " out[i]
      name = ""
    }'
}

# failed_tests BUILD: the names ctest's last run in BUILD failed, on one line
# ("(none named)" when the run failed before any test, e.g. a bad argument).
failed_tests() {
  local log=$1/Testing/Temporary/LastTestsFailed.log names
  names=$( [ -f "$log" ] && cut -d: -f2- "$log" | tr '\n' ' ')
  echo "${names:-(none named)}"
}
