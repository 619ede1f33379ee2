#!/usr/bin/env bash
# A node's own short fabric check, for Slurm's HealthCheckProgram or an
# epilog: runs `fabricbench check` on this node alone (local ranks over its
# GPUs or shared memory) and drains this node when the check fails on a
# measured figure, names this node's port or GPU, or does not finish. A
# healthy node is left alone; a profile that does not parse drains nothing
# (exit 2: the admin's error, not the node's).
#
#   scripts/slurm/health-check.sh [PROFILE]
#
# slurm.conf: HealthCheckProgram=/path/to/health-check.sh with
# HealthCheckInterval (a few minutes' check every few hours), or
# Epilog=... (a non-zero exit of an epilog drains the node with "Epilog
# error", so this script exits 0 whenever it could judge).
# PROFILE: a file, or a name from `fabricbench check --list-profiles`
# (default local-smoke; for a GPU node, a profile with backend nccl).
# The node: SLURMD_NODENAME (slurmd sets it), else this host's name.
# FB_HEALTH_RANKS: local ranks (default 2; one per GPU on a GPU node);
# FB_HEALTH_TIME: seconds before the check counts as hung (default 300);
# FB_HEALTH_OUT: where the last check's outputs stay (default
# /var/tmp/fabricbench-health); FABRICBENCH: the binary (default
# build/fabricbench of this checkout, else the installed bin/fabricbench,
# else fabricbench on PATH);
# FB_DRAIN_PREFIX: as for drain-blamed.sh.
# Exit: 0 judged (drained or not), 2 bad profile or no binary, 3 scontrol
# refused the drain.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)

about() { awk 'NR == 1 {next} /^#/ {sub(/^# ?/, ""); print; next} {exit}' "$0"; }
case ${1:-} in -h | --help) about; exit 0 ;; esac
profile=${1:-local-smoke}
fabricbench=$("$(dirname "$(readlink -f "$0")")/../lib/fabricbench-binary.sh" health-check.sh) || exit 2
out=${FB_HEALTH_OUT:-/var/tmp/fabricbench-health}
mkdir -p "$out" || exit 2
export FABRICBENCH=$fabricbench
# Open MPI refuses root unless told: slurmd runs this as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The last interval's verdict must never be read as this one's.
rm -f "$out/check.json"
timeout "${FB_HEALTH_TIME:-300}" mpirun -np "${FB_HEALTH_RANKS:-2}" --oversubscribe --bind-to none \
  "$fabricbench" check --profile "$profile" --out-dir "$out" --overwrite --progress off -q </dev/null
launch_rc=$?
verdict=$("$fabricbench" report verdict "$out/check.json" 2>/dev/null)
node=${SLURMD_NODENAME:-$(hostname -s)}
if [ -z "$verdict" ]; then
  if [ "$launch_rc" -ne 124 ]; then
    echo "health-check.sh: the check wrote no check.json (mpirun exit $launch_rc); nothing drained" >&2
    exit 2
  fi
  # Killed before it could write check.json: a hang the watchdog did not end.
  reason="${FB_DRAIN_PREFIX:-fabricbench}: $profile did not finish within ${FB_HEALTH_TIME:-300} s"
  scontrol update nodename="$node" state=drain reason="$reason" || exit 3
  echo "health-check.sh: drained $node: $reason"
  exit 0
fi
case ${verdict##* } in
  0) echo "health-check.sh: $profile passed; node left alone"; exit 0 ;;
  2) echo "health-check.sh: $profile is bad input (above); nothing drained" >&2; exit 2 ;;
esac
# The check ran here alone: what it blames on no node is this node's
# (MPI names hosts as gethostname() does, which `hostname` prints).
exec "$here/scripts/slurm/drain-blamed.sh" --or-host "$(hostname)" "$out/check.json"
