#!/usr/bin/env bash
# Drains the Slurm nodes that a `fabricbench check` blames (check.json's
# "bad": a failed rule that names a node, its port or GPU, or a link from
# it), with the rule and figure as the drain reason, so the scheduler stops
# placing jobs there until an admin resumes them. Nodes the check did not
# blame are left alone.
#
#   scripts/slurm/drain-blamed.sh [--dry-run] [--or-host HOST] CHECK.json
#
# Run it where scontrol may update nodes (root or the SlurmUser): at the end
# of scripts/slurm/acceptance.sbatch (FB_DRAIN=1), in an epilog, or from
# scripts/slurm/health-check.sh. The check's host names are matched to Slurm
# node names through sinfo (NodeName, or NodeHostname, with or without the
# domain); a blamed host that is no Slurm node is named and skipped.
# --dry-run prints the scontrol commands instead of running them; --or-host
# HOST: the check ran on that node alone, so a rule that failed on a measured
# figure without naming a node, or a run that did not finish, blames it too
# (`fabricbench report blamed --or-host`).
# FABRICBENCH: the binary that reads check.json (default: build/fabricbench
# of this checkout, else the installed bin/fabricbench, else fabricbench on
# PATH); FB_DRAIN_PREFIX starts each reason (default "fabricbench").
# Exit: 0 done (nodes drained or none blamed), 2 not a check.json or no
# binary, 3 scontrol refused a drain.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)

about() { awk 'NR == 1 {next} /^#/ {sub(/^# ?/, ""); print; next} {exit}' "$0"; }
dry=0
or_host=()
while [ $# -gt 1 ]; do
  case $1 in
    --dry-run) dry=1; shift ;;
    --or-host) or_host=(--or-host "$2"); shift 2 ;;
    *) break ;;
  esac
done
case ${1:-} in -h | --help) about; exit 0 ;; esac
[ $# -eq 1 ] || { about >&2; exit 2; }
json=$1
fabricbench=$("$(dirname "$(readlink -f "$0")")/../lib/fabricbench-binary.sh" drain-blamed.sh) || exit 2

# Read through the binary, never by matching check.json's text.
blamed=$("$fabricbench" report blamed "${or_host[@]}" "$json") || exit 2
if [ -z "$blamed" ]; then
  echo "drain-blamed.sh: $json blames no node; none drained"
  exit 0
fi

# Slurm node name of a host: by NodeName or NodeHostname, the domain ignored.
declare -A node_of
while read -r name host; do
  for h in "$name" "${name%%.*}" "$host" "${host%%.*}"; do node_of[$h]=$name; done
done < <(sinfo -h -N -o '%N %n' 2>/dev/null | sort -u)

rc=0
while IFS=$'\t' read -r host why; do
  node=${node_of[$host]:-${node_of[${host%%.*}]:-}}
  if [ -z "$node" ]; then
    echo "drain-blamed.sh: $host is blamed ($why) but is no Slurm node that sinfo lists; not drained" >&2
    continue
  fi
  # A drain reason is one line; Slurm keeps it whole, but sinfo shows the start.
  reason="${FB_DRAIN_PREFIX:-fabricbench}: ${why:0:200}"
  if [ "$dry" -eq 1 ]; then
    printf 'scontrol update nodename=%q state=drain reason=%q\n' "$node" "$reason"
  elif scontrol update nodename="$node" state=drain reason="$reason"; then
    echo "drain-blamed.sh: drained $node: $reason"
  else
    echo "drain-blamed.sh: scontrol could not drain $node (run as root or the SlurmUser)" >&2
    rc=3
  fi
done <<<"$blamed"
exit $rc
