#!/usr/bin/env bash
# A real network filesystem on emulated nodes (issue 24, "Real parts in the
# tests"): node 1 of a 3-node cluster (network namespaces, every link shaped
# to 1 Gbit/s with TBF) runs openssh-server; nodes 2 and 3 each mount its
# export with sshfs (FUSE) over their own link, at the same path in a mount
# namespace of their own, and `fabricbench storage` reads it from 1 and from
# 2 nodes at once (ranks in those namespaces, O_DIRECT or the cache dropped).
# Both figures must follow the server's 1 Gbit/s link (about 119.6 MB/s of
# payload): between 0.3x and 1.3x of it, 2 nodes not doubling 1, and at least
# the bytes read must have left the server through its shaped link. tmpfs and
# the local disk, measured in the same run, must be well above it.
#   sshfs_test.sh NAME FABRICBENCH   (NAME: a cluster name of its own, from CMake)
# Everything made (mounts, sshd, namespaces, keys, files) is removed on every
# exit, a failure or a signal included, and checked gone. Exit 77 (skipped)
# only where root, network namespaces, FUSE or the tools are missing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
emulate=$here/../../scripts/emulate-cluster.sh
name=${1:?cluster name}
fb=${2:?fabricbench binary}
prog=sshfs_test.sh
per_rank=128M
# TBF counts whole frames; TCP carries 1448 payload bytes per 1514-byte frame
# (as in cluster_test.cpp): 1 Gbit/s moves 0.1196 GB/s of data.
link_gbps=$(awk 'BEGIN{printf "%.4f", 1e9 / 8 * 1448 / 1514 / 1e9}')

skip() { echo "$prog: skipped: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "emulated nodes need root (network namespaces, tc, mounts)"
for tool in sshfs sshd ssh-keygen fusermount3 mpirun tc nsenter; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh installs it)"
done
[ -c /dev/fuse ] && grep -qw fuse /proc/filesystems || skip "no FUSE in this kernel (/dev/fuse, /proc/filesystems)"
unshare --net true 2>/dev/null || skip "network namespaces are not available (unshare --net failed)"

# A run of this name killed outright (SIGKILL: no trap) left its mounts and
# folders: this build tree's name is in theirs, so only its own are removed.
for m in $(awk -v p="/tmp/fb_sshfs_${name}_" 'index($5, p) == 1 {print $5}' /proc/self/mountinfo); do
  fusermount3 -uz "$m" 2>/dev/null || umount -l "$m"
done
rm -rf /tmp/fb_sshfs_"${name}"_* /dev/shm/fb_sshfs_"${name}"_*
work=$(mktemp -d "/tmp/fb_sshfs_${name}_XXXXXX")
shm=$(mktemp -d "/dev/shm/fb_sshfs_${name}_XXXXXX")
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
sshd_pid=
child=
made_privsep=

# Unmount first (a FUSE mount whose daemon the cluster's take-down kills would
# stay behind as a dead mount), then stop sshd, take the cluster down, remove
# the keys and files, and check that none of it is left.
cleanup() {
  local rc=$? left
  trap - EXIT INT TERM
  [ -z "$child" ] || kill -TERM "$child" 2>/dev/null
  for m in "$work"/mnt-*; do
    mountpoint -q "$m" 2>/dev/null && { fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m"; }
  done
  [ -z "$sshd_pid" ] || kill -TERM "$sshd_pid" 2>/dev/null
  "$emulate" down --name "$name" >/dev/null 2>&1 || fail "cleanup: cluster $name did not come down"
  left=$(awk -v w="$work" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo)
  [ -z "$left" ] || fail "cleanup: mounts left: $left"
  [ -z "$sshd_pid" ] || ! kill -0 "$sshd_pid" 2>/dev/null || fail "cleanup: sshd $sshd_pid still runs"
  [ -z "$made_privsep" ] || rmdir "$made_privsep" 2>/dev/null || fail "cleanup: $made_privsep left"
  left=$(ip netns list | awk '{print $1}' | grep -E "^$name-" | tr '\n' ' ')
  [ -z "$left" ] || fail "cleanup: namespaces left: $left"
  [ -z "$left" ] && [ -z "$(awk -v w="$work" 'index($5, w) == 1' /proc/self/mountinfo)" ] && rm -rf "$work"
  rm -rf "$shm"
  [ ! -e "$work" ] || fail "cleanup: $work left (keys, export)"
  [ $rc -ne 0 ] || [ $failures -eq 0 ] || rc=1
  [ $rc -ne 0 ] || echo "$prog: all checks passed; mounts, sshd, cluster $name, keys and files gone"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() { fail "$*"; exit 1; }

"$emulate" down --name "$name" >/dev/null 2>&1 || true  # a killed earlier run's cluster
"$emulate" up 3 --name "$name" --rate 1gbit >"$work/up.log" 2>&1 || die "cluster up: $(cat "$work/up.log")"
# shellcheck disable=SC1090  # the cluster's env file: NAME, SUBNET, NODES, DIR
. "/run/fabricbench-emu/$name/env"
base=${SUBNET%.0/24}
server=$name-n1 server_ip=$base.11

# --- the server: sshd on node 1, with keys that live only in $work ---------
ssh-keygen -q -t ed25519 -N '' -f "$work/host_key" || die "ssh-keygen (host key)"
ssh-keygen -q -t ed25519 -N '' -f "$work/client_key" || die "ssh-keygen (client key)"
cp "$work/client_key.pub" "$work/authorized_keys"
mkdir -p "$work/export"
cat >"$work/sshd_config" <<EOF
ListenAddress $server_ip
Port 22
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PidFile $work/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
Subsystem sftp internal-sftp
LogLevel ERROR
EOF
cat >"$work/ssh_config" <<EOF
Host *
  IdentityFile $work/client_key
  IdentitiesOnly yes
  BatchMode yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  Compression no
  Ciphers aes128-gcm@openssh.com
EOF
# sshd refuses to start without its privilege separation directory, which
# systemd's tmpfiles make at boot; a fresh container that never ran the sshd
# service has none (CI failed on exactly that). Made here, removed at cleanup.
privsep=/run/sshd
if [ ! -d "$privsep" ]; then
  install -d -m 0755 -o root -g root "$privsep" || die "cannot make $privsep for sshd"
  made_privsep=$privsep
fi
ip netns exec "$server" /usr/sbin/sshd -D -e -f "$work/sshd_config" 2>"$work/sshd.log" &
sshd_pid=$!
for _ in $(seq 50); do
  ip netns exec "$name-n2" bash -c "echo >/dev/tcp/$server_ip/22" 2>/dev/null && break
  kill -0 "$sshd_pid" 2>/dev/null || die "sshd exited: $(cat "$work/sshd.log")"
  sleep 0.1
done

# --- the clients: nodes 2 and 3 mount the export over their own links -----
# The sshfs daemon runs in the node's network namespace but mounts in the
# machine's (so cleanup sees and removes it); each node's ranks then see their
# own node's mount at one path, $work/share, bound in their mount namespace.
mkdir -p "$work/share"
for n in 2 3; do
  ns=$name-n$n
  mkdir -p "$work/mnt-$ns"
  nsenter --net="/run/netns/$ns" sshfs -F "$work/ssh_config" "root@$server_ip:$work/export" "$work/mnt-$ns" \
    2>"$work/sshfs-$ns.log" || die "sshfs on $ns: $(cat "$work/sshfs-$ns.log")"
  mountpoint -q "$work/mnt-$ns" || die "sshfs on $ns: nothing mounted at $work/mnt-$ns"
done
printf '%s slots=1\n' "$base.12" "$base.13" >"$work/hostfile"
{
  echo '#!/bin/bash'
  echo '# mpirun calls it as ssh: "agent [options] HOST COMMAND..."; the rank sees its node'"'"'s mount.'
  echo 'while [[ $1 == -* ]]; do shift; done; host=$1; shift'
  echo "case \$host in $base.12) ns=$name-n2 ;; $base.13) ns=$name-n3 ;; *) exit 255 ;; esac"
  echo "exec ip netns exec \"\$ns\" unshare --uts /bin/sh -c \"mount --bind $work/mnt-\$ns $work/share && hostname \$ns && \$*\""
} >"$work/agent"
chmod +x "$work/agent"

storage_args=(--patterns seq --direct on --block-sizes 1M --bytes "$per_rank" -q)
sent_before=$(ip netns exec "$server" tc -s qdisc show dev eth0 | awk '/Sent/{print $2; exit}')
t0=$(date +%s.%N)
ip netns exec "$name-n2" unshare --uts /bin/bash -c "mount --bind $work/mnt-$name-n2 $work/share && hostname $name-n2 &&
  exec timeout 90 mpirun --allow-run-as-root --hostfile $work/hostfile --mca plm_rsh_agent $work/agent \
  --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include $SUBNET --mca oob_tcp_if_include $SUBNET \
  --bind-to none --mca mpi_yield_when_idle 1 -np 2 $fb storage --path $work/share --nodes 1,2 \
  ${storage_args[*]} --out $work/sshfs.jsonl" >"$work/run.log" 2>&1 &
# In the background, so that a signal (a test timeout) reaches the traps at once.
child=$!
wait "$child" || die "fabricbench storage on sshfs: exit $? ($(tail -20 "$work/run.log"))"
child=
t1=$(date +%s.%N)
sent_after=$(ip netns exec "$server" tc -s qdisc show dev eth0 | awk '/Sent/{print $2; exit}')

# tmpfs and the local disk, one rank each, in the same run.
for t in tmpfs:"$shm" disk:"$work"; do
  mkdir -p "${t#*:}/fb"
  timeout 60 "$fb" storage --path "${t#*:}/fb" "${storage_args[@]}" --out "$work/${t%%:*}.jsonl" \
    >"$work/${t%%:*}.log" 2>&1 || die "fabricbench storage on ${t%%:*}: exit $? ($(tail -5 "$work/${t%%:*}.log"))"
done

# --- the figures ------------------------------------------------------------
# The record's rows through the binary (`report storage`: tab-separated, in
# docs/storage.md's column order), never its text.
columns=(target pattern mode nodes block_bytes file_bytes files cache io_engine queue_depth sync aggregate_gbps fs_type
  shared bytes hosts)
read_line() { "$fb" report storage "$work/$1.jsonl" | awk -F'\t' -v n="$2" '$2 == "seq_read" && $4 == n { print; exit }'; }
field() {  # field LINE NAME
  local i
  for i in "${!columns[@]}"; do
    [ "${columns[$i]}" = "$2" ] && { cut -f$((i + 1)) <<<"$1"; return; }
  done
  echo "field: no column $2" >&2
  exit 2
}
sorted_hosts() { field "$1" hosts | tr , '\n' | sort | paste -sd,; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", a / b}'; }
above() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a > b)}'; }

one=$(read_line sshfs 1) two=$(read_line sshfs 2)
[ -n "$one" ] && [ -n "$two" ] || die "no seq_read line at 1 and 2 nodes in the record ($(cat "$work/sshfs.jsonl"))"
read_bytes=0
for l in "$one" "$two"; do
  n=$(field "$l" nodes) g=$(field "$l" aggregate_gbps) r=$(ratio "$(field "$l" aggregate_gbps)" "$link_gbps")
  printf '%s: sshfs seq_read 1 MiB blocks, %s per rank, %d node(s) %s: %.1f MB/s aggregate (%sx the link), cache %s\n' \
    "$prog" "$per_rank" "$n" "$(field "$l" hosts)" "$(awk -v g="$g" 'BEGIN{print g * 1e3}')" "$r" \
    "$(field "$l" cache)"
  [ "$(field "$l" fs_type)" = fuse.sshfs ] || fail "$n node(s): fs_type $(field "$l" fs_type), expected fuse.sshfs"
  [[ $(field "$l" cache) =~ ^(bypassed|dropped)$ ]] || fail "$n node(s): cache $(field "$l" cache): not the link's figure"
  above "$r" 0.3 || fail "$n node(s): $r x the 1 Gbit/s link, expected above 0.3x"
  above 1.3 "$r" || fail "$n node(s): $r x the 1 Gbit/s link, expected below 1.3x (a cache, not the link?)"
  read_bytes=$((read_bytes + $(field "$l" bytes)))
done
[ "$(sorted_hosts "$two")" = "$name-n2,$name-n3" ] ||
  fail "2 nodes: hosts $(field "$two" hosts), expected $name-n2 and $name-n3"
[ "$(field "$two" shared)" = true ] || fail "2 nodes: shared is not true: the nodes did not see one export"
scaling=$(ratio "$(field "$two" aggregate_gbps)" "$(field "$one" aggregate_gbps)")
echo "$prog: 2 nodes / 1 node aggregate: ${scaling}x (one server link: must not double)"
above 1.5 "$scaling" || fail "2 nodes read ${scaling}x what 1 node did through one 1 Gbit/s server link"
sent=$((sent_after - sent_before))
echo "$prog: the server's shaped link sent $sent bytes; the reads moved $read_bytes"
[ "$sent" -ge "$read_bytes" ] || fail "the server's link sent $sent bytes, fewer than the $read_bytes read: not over the link"
for t in tmpfs disk; do
  l=$(read_line $t 1)
  [ -n "$l" ] || { fail "$t: no seq_read line ($(cat "$work/$t.jsonl"))"; continue; }
  r=$(ratio "$(field "$l" aggregate_gbps)" "$link_gbps")
  printf '%s: %s (%s) seq_read, 1 rank: %.1f MB/s (%sx the link), cache %s\n' "$prog" "$t" "$(field "$l" fs_type)" \
    "$(awk -v g="$(field "$l" aggregate_gbps)" 'BEGIN{print g * 1e3}')" "$r" "$(field "$l" cache)"
  above "$r" 3 || fail "$t: only ${r}x the 1 Gbit/s link, expected well above it (3x)"
done
echo "$prog: measured in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b - a}') s on sshfs"
[ $failures -eq 0 ]
