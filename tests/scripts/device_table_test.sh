#!/usr/bin/env bash
# scripts/device-table.sh's step row on a step record the binary writes here
# (2 local ranks, the host workload): the script reads the record through
# `fabricbench report steps`, so the row shows the compute-only median and
# the planned compute that `report steps` prints, not "-". Before, it parsed
# the record's JSON itself.
#   device_table_test.sh SOURCE_DIR FABRICBENCH MPIEXEC
set -u
src=${1:?usage: device_table_test.sh SOURCE_DIR FABRICBENCH MPIEXEC}
fb=${2:?}
mpiexec=${3:?}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "device_table_test: FAIL: $*" >&2
  exit 1
}
"$mpiexec" -np 2 --oversubscribe --bind-to none "$fb" step -w "$src/profiles/workloads/host-dp-2ranks.yaml" \
  --steps 2 --warmup 0 --out "$dir/step.jsonl" >"$dir/step.out" 2>&1 ||
  fail "fabricbench step exited $?: $(cat "$dir/step.out")"
# The figures as report steps prints them: its compute_only line.
read -r measured planned < <("$fb" report steps "$dir/step.jsonl" |
  awk -F'\t' '$3 == "compute_only" { print $6, $11 }')
[ -n "$measured" ] && [ -n "$planned" ] || fail "report steps printed no compute_only line"
out=$(FABRICBENCH=$fb "$src/scripts/device-table.sh" "$dir") || fail "device-table.sh exited $?: $out"
echo "$out"
line=$(grep '^step compute-only vs planned' <<<"$out") || fail "no step row"
label='step compute-only vs planned at calibrated rate (us)'
read -r ours ref _ < <(echo "${line#"$label"}")
# report steps prints 6 significant digits, the table 2 decimals: equal within 1 in 1e5.
awk -v a="$ours" -v b="$measured" -v c="$ref" -v d="$planned" \
  'BEGIN { exit !(a > 0 && c > 0 && (a - b) ^ 2 <= (1e-5 * b) ^ 2 && (c - d) ^ 2 <= (1e-5 * d) ^ 2) }' ||
  fail "the step row shows $ours against $ref; report steps says $measured against $planned: $line"
echo "ok: the step row shows $ours us measured against $ref us planned, as report steps prints them"
