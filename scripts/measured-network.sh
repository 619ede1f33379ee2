#!/usr/bin/env bash
# Prints the `--network` spec for a results file: the file itself when it has
# inter-node rows (scope inter or rail), else FILE@SCOPE with the first scope
# it measured, which then stands in for the network between nodes (a run on
# one host has only global or intra rows).
#   scripts/measured-network.sh RESULTS.jsonl
set -euo pipefail
results=${1:?usage: measured-network.sh RESULTS.jsonl}
# Only measurement lines count: the inventory lines name scopes too (paths[]).
row='"type":"measurement","op":"[a-z_]*","backend":"[a-z_-]*","scope":'
if grep -q "$row"'"\(inter\|rail\)"' "$results"; then
  echo "$results"
  exit 0
fi
scope=$(grep -m1 -o "$row"'"[a-z]*"' "$results" |
        sed 's/.*"scope":"\([a-z]*\)"/\1/') || true
[ -n "$scope" ] || { echo "measured-network.sh: $results has no measurement rows" >&2; exit 2; }
echo "$results@$scope"
