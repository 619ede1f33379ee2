#!/usr/bin/env bash
# One pod of the fabricbench acceptance Job (acceptance.yaml). Every pod runs
# sshd for Open MPI's launcher; pod 0 waits until every pod answers, runs
# `fabricbench check` across them with mpirun, one rank per GPU, writes the
# record, check.json and junit.xml under FB_OUT, lets the other pods end,
# and exits with the verdict (0 pass, 1 fail, 2 bad input, 3 did not finish),
# which becomes the Job's: Complete on a pass, Failed otherwise.
# Environment (the manifest sets it): FB_NODES, FB_GPUS_PER_NODE, FB_PROFILE,
# FB_OUT, FB_SERVICE (the headless Service), FB_JOB (the Job's name),
# JOB_COMPLETION_INDEX (Kubernetes), FB_CHECK_ARGS (more `check` flags),
# FB_SSH_PORT (2222), FB_WAIT_S (how long pods wait for each other, 600).
# FB_DRY_RUN=1 prints pod 0's launch line and exits (the tests read it).
set -euo pipefail
prog="fabricbench pod"
die() { echo "$prog: $1" >&2; exit "${2:-2}"; }

nodes=${FB_NODES:?set FB_NODES, the pods (completions) of the Job}
gpus=${FB_GPUS_PER_NODE:?set FB_GPUS_PER_NODE, the nvidia.com/gpu each pod requests}
index=${JOB_COMPLETION_INDEX:?not an Indexed Job pod: JOB_COMPLETION_INDEX is unset}
port=${FB_SSH_PORT:-2222}
wait_s=${FB_WAIT_S:-600}
hostfile=/tmp/fabricbench-hosts
out=${FB_OUT:-/results}/fabricbench-check-$(date -u +%Y%m%dT%H%M%SZ)
# An Indexed Job's pod is named <job>-<index> and, with `subdomain`, has that
# name in the headless Service's DNS.
host_of() { echo "${FB_JOB:?set FB_JOB, the Job name}-$1.${FB_SERVICE:?set FB_SERVICE, the headless Service}"; }

# shellcheck disable=SC2206  # FB_CHECK_ARGS is a list of flags
launch=(mpirun -np $((nodes * gpus)) --hostfile "$hostfile" --map-by "ppr:$gpus:node" --bind-to none
  --mca plm_rsh_args "-p $port -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
  -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET
  fabricbench check --profile "${FB_PROFILE:?set FB_PROFILE}" --out-dir "$out" --progress off ${FB_CHECK_ARGS:-})
if [ "${FB_DRY_RUN:-0}" = 1 ]; then
  printf '%s\n' "${launch[*]}"
  exit 0
fi

# Without unlimited locked memory RDMA cannot register buffers and NCCL falls
# back to sockets without a word: refuse to measure that.
ulimit -l unlimited 2>/dev/null || die "cannot lift the locked-memory limit (ulimit -l unlimited): give the container the IPC_LOCK capability and a runtime whose memlock limit is unlimited; without it NCCL falls back to sockets"

# sshd with the key of the fabricbench-ssh Secret, for mpirun.
install -d -m 700 /root/.ssh
install -m 600 /etc/fabricbench-ssh/id_ed25519 /root/.ssh/id_ed25519 || die "no /etc/fabricbench-ssh/id_ed25519: create the fabricbench-ssh Secret (docs/kubernetes.md)"
cp /etc/fabricbench-ssh/id_ed25519.pub /root/.ssh/authorized_keys
mkdir -p /run/sshd
ssh-keygen -A >/dev/null
/usr/sbin/sshd -p "$port" || die "sshd did not start on port $port" 3

if [ "$index" != 0 ]; then  # a worker: serve mpirun until pod 0 says it is done
  for ((s = 0; s < wait_s || wait_s == 0; s += 5)); do
    [ -e /tmp/fabricbench-done ] && exit 0
    sleep 5
  done
  die "pod 0 never said it was done in ${wait_s}s (FB_WAIT_S)" 3
fi

: >"$hostfile"
for ((i = 0; i < nodes; i++)); do
  host=$(host_of "$i")
  for ((s = 0; ; s += 5)); do
    ssh -p "$port" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=5 "$host" true \
      2>/dev/null && break
    [ "$s" -lt "$wait_s" ] || die "pod $i ($host) did not answer on port $port in ${wait_s}s" 3
    sleep 5
  done
  echo "$host slots=$gpus" >>"$hostfile"
done
mkdir -p "$out"
echo "$prog: $nodes pods x $gpus GPUs -> $out"
rc=0
"${launch[@]}" || rc=$?
for ((i = 1; i < nodes; i++)); do
  ssh -p "$port" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "$(host_of "$i")" touch /tmp/fabricbench-done || true
done
exit "$rc"
