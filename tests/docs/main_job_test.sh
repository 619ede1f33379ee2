#!/usr/bin/env bash
# The README's main job, `scripts/quickstart.sh`, as a new user runs it, on
# an existing build (FABRICBENCH_BUILD: nothing is compiled again) with a
# short sweep: it must end with exit 0 and the model's table with a row of
# figures for the link just measured and for each of the two presets. The
# quick start once failed at its last step (its script matched the record's
# text and stopped finding rows) while every test passed. .ci/run runs this
# after the tests (phase main-job).
#   tests/docs/main_job_test.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: main_job_test.sh BUILD_DIR}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "main_job_test: FAIL: $*" >&2
  exit 1
}

FABRICBENCH_BUILD=$build FABRICBENCH_RESULTS=$dir "$here/scripts/quickstart.sh" -b 8 -e 1M >"$dir/out" 2>&1
rc=$?
cat "$dir/out"
[ "$rc" -eq 0 ] || fail "scripts/quickstart.sh exited $rc"
records=("$dir"/local-*.jsonl)
[ -s "${records[0]}" ] || fail "no record under FABRICBENCH_RESULTS"
# Columns are set apart by two or more spaces (a head carries its unit: "line (Gbit/s)").
columns_of() { awk -F'  +' '{ print NF }' <<<"$1"; }
head=$(grep -m1 '^network ' "$dir/out") || fail "no model table (no line starting 'network')"
columns=$(columns_of "$head")
[ "$columns" -ge 8 ] || fail "the model table has $columns columns: $head"
for network in "${records[0]}@global" 1x10gbe 8x400g-ndr-ib; do
  row=$(awk -v n="$network" '$1 == n' "$dir/out")
  [ -n "$row" ] || fail "the model table has no row for $network"
  [ "$(columns_of "$row")" -eq "$columns" ] || fail "the row of $network has not one value per column: $row"
  # Every value is a figure; a measured link says "measured" for its line rate,
  # and the last column names where the compute rate came from (docs/model.md).
  values=$(tr -s ' ' '\n' <<<"$row" | tail -n +2)
  if [[ "$head" == *compute_source ]]; then
    source=$(tail -n 1 <<<"$values")
    values=$(head -n -1 <<<"$values")
    grep -Eqx 'mfu|stated_tflops|measured_curve|stated_curve|preset_curve' <<<"$source" ||
      fail "the row of $network names no compute source ($source): $row"
  fi
  bad=$(grep -Evx '[0-9]+(\.[0-9]+)?|measured' <<<"$values")
  [ -z "$bad" ] || fail "the row of $network has values that are not figures ($bad): $row"
done
echo "main_job_test: ok: exit 0, the model table has figures for the measured link, 1x10gbe and 8x400g-ndr-ib"
