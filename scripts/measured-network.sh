#!/usr/bin/env bash
# Prints the `--network` spec for a results file: the file itself when it has
# inter-node rows (scope inter or rail), else FILE@SCOPE with the first scope
# it measured, which then stands in for the network between nodes (a run on
# one host has only global or intra rows). The scopes come from the binary
# (`fabricbench report scopes`), never from the record's text.
#   scripts/measured-network.sh RESULTS.jsonl
# The binary: FABRICBENCH, else this checkout's or installation's own, else the
# PATH's (scripts/lib/fabricbench-binary.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/usage.sh" || exit 2
help_if_asked "$0" "$@"
results=${1:?usage: measured-network.sh RESULTS.jsonl}
fb=$("$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/fabricbench-binary.sh" measured-network.sh)
scopes=$("$fb" report scopes "$results")  # exit 2 and its reason on stderr when it has none
if grep -qx 'inter\|rail' <<<"$scopes"; then
  echo "$results"
else
  echo "$results@$(head -n1 <<<"$scopes")"
fi
