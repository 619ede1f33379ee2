#!/usr/bin/env bash
# Emulated nodes on one machine: N network namespaces on a software switch
# (a bridge in its own namespace), each behind a veth link shaped with TBF in
# both directions, plus what mpirun needs to start ranks inside them.
#
#   emulate-cluster.sh up N [--rate RATE] [--shape NODE=RATE ...] [--name NAME] [--subnet A.B.C.0/24]
#   emulate-cluster.sh down   [--name NAME]
#   emulate-cluster.sh status [--name NAME]
#   emulate-cluster.sh with N [up options] -- COMMAND...   up, run COMMAND, always down
#
# NAME (default $FB_CLUSTER_NAME; for up and with, else "fbe<pid>") prefixes every namespace:
# NAME-n1..NAME-nN are the nodes (and their host names), NAME-sw the switch.
# Links, the bridge and their addresses live only inside those namespaces, so
# clusters of other names never see each other; each also gets its own /24
# (derived from NAME) so their addresses never coincide either. `down` removes
# exactly the namespaces its `up` recorded, after stopping the processes
# inside them; it fails when anything is left.
# RATE is tc's syntax (1gbit, 250mbit); without --rate links are unshaped.
# NODE in --shape is a node number (1..N) or its namespace name.
#
# `up` writes to the cluster's folder ($FB_CLUSTER_DIR, else /run/fabricbench-emu/NAME):
#   hostfile   one line per node (its address, slots=1)
#   nsrsh      the launch agent mpirun uses instead of ssh: starts the command
#              inside the node's namespace with the node's own host name
#   mpirun     mpirun started on node 1 with the agent, the hostfile and the
#              transport settings that work across namespaces; arguments pass on
#   env        NAME, SUBNET, NODES, DIR (sourceable)
#   namespaces one namespace per line, with its inode (what `down` removes)
# Needs root (network namespaces and tc). Exit codes: 0 ok, 1 failed, 2 bad input.
set -Eeuo pipefail

prog=emulate-cluster.sh
die() { echo "$prog: $1" >&2; exit "${2:-1}"; }
# The opening comment: on stdout for --help (exit 0), on stderr for a call
# without a command (exit 2). Self-contained: the script is installed alone.
about() { awk 'NR == 1 {next} /^#/ {sub(/^# ?/, ""); print; next} {exit}' "$0"; }
usage() { about >&2; exit 2; }

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in up | down | status | with) ;; -h | --help) about; exit 0 ;; *) die "unknown command '$cmd': use up, down, status or with" 2 ;; esac
[ "$(id -u)" -eq 0 ] || die "must run as root: network namespaces and tc need CAP_NET_ADMIN (try: sudo $0 $cmd ...)" 2

name=${FB_CLUSTER_NAME:-}
rate=
subnet=
nodes=0
shapes=()
command=()

parse() {
  if [ "$cmd" = up ] || [ "$cmd" = with ]; then
    [ $# -ge 1 ] && [[ $1 =~ ^[0-9]+$ ]] || die "$cmd: give the number of nodes first, e.g. '$cmd 4'" 2
    nodes=$1; shift
    [ "$nodes" -ge 2 ] && [ "$nodes" -le 200 ] || die "$cmd $nodes: between 2 and 200 nodes" 2
  fi
  while [ $# -gt 0 ]; do
    case $1 in
      --name) [ $# -ge 2 ] || die "--name needs a value" 2; name=$2; shift 2 ;;
      --rate) [ $# -ge 2 ] || die "--rate needs a value, e.g. 1gbit" 2; rate=$2; shift 2 ;;
      --shape) [ $# -ge 2 ] || die "--shape needs NODE=RATE, e.g. 3=250mbit" 2; shapes+=("$2"); shift 2 ;;
      --subnet) [ $# -ge 2 ] || die "--subnet needs A.B.C.0/24" 2; subnet=$2; shift 2 ;;
      --) [ "$cmd" = with ] || die "'--' only after 'with'" 2; shift; command=("$@"); break ;;
      *) die "unknown option '$1'" 2 ;;
    esac
  done
  if [ -z "$name" ]; then
    # A new cluster may take a name of its own; an existing one must be named.
    if [ "$cmd" = up ] || [ "$cmd" = with ]; then
      name=fbe$$
    else
      die "$cmd: which cluster? give --name NAME (up here: $(ls /run/fabricbench-emu 2>/dev/null | tr '\n' ' '))" 2
    fi
  fi
  # Namespace names are global on the machine; keep them short and plain.
  [[ $name =~ ^[a-z][a-z0-9]{0,11}$ ]] || die "--name '$name': 1-12 lower-case letters and digits, starting with a letter" 2
  if [ -z "$subnet" ]; then
    local h; h=$(printf '%s' "$name" | cksum | cut -d' ' -f1)
    subnet="10.$((100 + h % 100)).$(((h / 100) % 256)).0/24"
  fi
  [[ $subnet =~ ^([0-9]+\.[0-9]+\.[0-9]+)\.0/24$ ]] || die "--subnet '$subnet': give a /24 such as 10.200.0.0/24" 2
  base=${BASH_REMATCH[1]}
  dir=${FB_CLUSTER_DIR:-/run/fabricbench-emu/$name}
  sw=$name-sw
}

node_ns() { echo "$name-n$1"; }
node_ip() { echo "$base.$((10 + $1))"; }

valid_rate() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?([kmg]?bit|[kmg]?bps)$ ]]; }

# The rate of node i: --shape wins over --rate.
rate_of() {
  local i=$1 r=$rate s node
  for s in "${shapes[@]}"; do
    node=${s%%=*}
    if [ "$node" = "$i" ] || [ "$node" = "$(node_ns "$i")" ]; then r=${s#*=}; fi
  done
  echo "$r"
}

check_shapes() {
  local s node r
  [ -z "$rate" ] || valid_rate "$rate" || die "--rate '$rate': use tc's units, e.g. 1gbit or 250mbit" 2
  for s in "${shapes[@]}"; do
    [[ $s == *=* ]] || die "--shape '$s': give NODE=RATE, e.g. 3=250mbit" 2
    node=${s%%=*}; r=${s#*=}
    valid_rate "$r" || die "--shape '$s': '$r' is not a rate; use tc's units, e.g. 250mbit" 2
    if [[ $node =~ ^[0-9]+$ ]]; then
      [ "$node" -ge 1 ] && [ "$node" -le "$nodes" ] || die "--shape '$s': node $node is not in 1..$nodes" 2
    else
      [[ $node =~ ^$name-n([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -le "$nodes" ] ||
        die "--shape '$s': '$node' is not a node of cluster $name ($name-n1..$name-n$nodes)" 2
    fi
  done
}

# Record a namespace before creating it, then its inode once it exists: a
# signal between the two steps still leaves it on the list `down` removes.
add_ns() {
  echo "$1 -" >>"$dir/namespaces"
  ip netns add "$1"
  sed -i "s/^$1 -\$/$1 $(stat -L -c %i "/run/netns/$1")/" "$dir/namespaces"
}

shape() {  # shape NAMESPACE DEVICE RATE: TBF on the device's egress
  # burst and latency as measured in shared/notes/environment.md (957 Mbit/s at 1gbit).
  ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$3" burst 512kb latency 20ms
}

write_files() {
  local i
  : >"$dir/hostfile"
  for ((i = 1; i <= nodes; i++)); do echo "$(node_ip "$i") slots=1" >>"$dir/hostfile"; done
  {
    echo '#!/bin/bash'
    echo "# Launch agent of emulated cluster $name: mpirun calls it as ssh, 'nsrsh [options] HOST COMMAND...'."
    echo 'while [[ $1 == -* ]]; do shift; done; host=$1; shift'
    echo 'case $host in'
    for ((i = 1; i <= nodes; i++)); do echo "  $(node_ip "$i") | $(node_ns "$i")) ns=$(node_ns "$i") ;;"; done
    echo "  *) echo \"nsrsh: \$host is not a node of cluster $name\" >&2; exit 255 ;;"
    echo 'esac'
    echo 'exec ip netns exec "$ns" unshare --uts /bin/sh -c "hostname $ns; $*"'
  } >"$dir/nsrsh"
  {
    echo '#!/bin/bash'
    echo "# mpirun on node 1 of emulated cluster $name; arguments are passed on."
    echo "exec ip netns exec $(node_ns 1) unshare --uts /bin/bash -c 'hostname $(node_ns 1); exec \"\$@\"' mpirun \\"
    echo "  mpirun --allow-run-as-root --hostfile $dir/hostfile --mca plm_rsh_agent $dir/nsrsh \\"
    echo "  --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include $subnet --mca oob_tcp_if_include $subnet \\"
    echo '  --bind-to none --mca btl_tcp_links 2 --mca mpi_yield_when_idle 1 "$@"'
  } >"$dir/mpirun"
  chmod +x "$dir/nsrsh" "$dir/mpirun"
  printf 'NAME=%s\nSUBNET=%s\nNODES=%s\nDIR=%s\n' "$name" "$subnet" "$nodes" "$dir" >"$dir/env"
}

up() {
  check_shapes
  [ ! -e "$dir/namespaces" ] || die "cluster $name is already up ($dir); '$prog down --name $name' first" 2
  local i ns r
  for ((i = 0; i <= nodes; i++)); do
    ns=$([ "$i" -eq 0 ] && echo "$sw" || node_ns "$i")
    [ ! -e "/run/netns/$ns" ] || die "namespace $ns exists but cluster $name did not record it: choose another --name" 2
  done
  mkdir -p "$dir"
  : >"$dir/namespaces"
  # A failure half-way leaves nothing behind.
  trap 'echo "$prog: up failed; removing what was made" >&2; down >/dev/null || true' ERR
  add_ns "$sw"
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
  for ((i = 1; i <= nodes; i++)); do
    ns=$(node_ns "$i")
    add_ns "$ns"
    ip -n "$ns" link set lo up
    # Created inside the switch namespace, the peer inside the node's: no
    # device of this cluster ever appears in the machine's own namespace.
    ip -n "$sw" link add "p$i" type veth peer name eth0 netns "$ns"
    ip -n "$ns" addr add "$(node_ip "$i")/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$sw" link set "p$i" master br0
    ip -n "$sw" link set "p$i" up
    r=$(rate_of "$i")
    if [ -n "$r" ]; then
      shape "$ns" eth0 "$r"   # what the node sends
      shape "$sw" "p$i" "$r"  # what the node receives
    fi
  done
  write_files
  trap - ERR
  echo "$prog: cluster $name up: $nodes nodes on $subnet, files in $dir" >&2
}

# Processes whose network namespace is one of `inodes` (a space-separated
# list): one stat over /proc, which also finds processes in a namespace whose
# name is already gone.
pids_in() {
  stat -L -c '%i %n' /proc/[0-9]*/ns/net 2>/dev/null | while read -r ino path; do
    [[ " $1 " == *" $ino "* ]] && { path=${path#/proc/}; echo "${path%%/*}"; }
  done
  return 0
}

down() {
  [ -e "$dir/namespaces" ] || { echo "$prog: cluster $name is not up (no $dir/namespaces)" >&2; return 0; }
  local ns ino inodes="" pids left=""
  while read -r ns ino; do
    [ "$ino" != - ] || ino=$(stat -L -c %i "/run/netns/$ns" 2>/dev/null) || continue
    inodes+=" $ino"
  done <"$dir/namespaces"
  # Stop what runs inside (ranks, daemons), politely first.
  pids=$(pids_in "$inodes")
  if [ -n "$pids" ]; then
    kill -TERM $pids 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      sleep 0.2
      pids=$(pids_in "$inodes")
      [ -z "$pids" ] && break
    done
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    sleep 0.2
  fi
  while read -r ns ino; do
    # Only a namespace of that name that is still the one `up` created ("-":
    # recorded, then created under a name `up` had checked was free).
    [ -e "/run/netns/$ns" ] || continue
    if [ "$ino" = - ] || [ "$(stat -L -c %i "/run/netns/$ns" 2>/dev/null)" = "$ino" ]; then
      ip netns del "$ns" || left+=" $ns"
    fi
  done <"$dir/namespaces"
  pids=$(pids_in "$inodes")
  [ -z "$pids" ] || left+=" processes:$(echo $pids)"
  if [ -n "$left" ]; then
    echo "$prog: cluster $name: could not remove:$left" >&2
    return 1
  fi
  rm -rf "$dir"
  echo "$prog: cluster $name down" >&2
}

status() {
  [ -e "$dir/namespaces" ] || { echo "cluster $name: not up"; return 1; }
  # shellcheck disable=SC1091
  . "$dir/env"
  echo "cluster $name: $NODES nodes on $SUBNET, files in $dir"
  local ns ino
  while read -r ns ino; do
    if [ ! -e "/run/netns/$ns" ]; then echo "  $ns: missing"; continue; fi
    local dev=eth0; [ "$ns" = "$sw" ] && dev=br0
    printf '  %-16s %-18s pids: %s\n' "$ns" "$(ip -n "$ns" -br -4 addr show dev "$dev" 2>/dev/null | awk '{print $3}')" \
      "$(ip netns pids "$ns" | tr '\n' ' ')"
    ip -n "$ns" -o link show type veth 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | while read -r d; do
      printf '    %-6s %s\n' "$d" "$(ip netns exec "$ns" tc qdisc show dev "$d" | grep -o 'rate [^ ]*' || echo unshaped)"
    done
  done <"$dir/namespaces"
}

with() {
  [ ${#command[@]} -gt 0 ] || die "with: give the command after '--'" 2
  child=
  # Whatever ends this script (the command's exit, a failure, a signal from a
  # test timeout), the command is stopped and the cluster taken down.
  trap 'rc=$?; [ -z "$child" ] || kill -TERM "$child" 2>/dev/null || true; down || rc=1; exit $rc' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  up
  # In the background, so that a signal reaches the traps at once (bash runs
  # traps only between foreground commands).
  FB_CLUSTER_DIR=$dir FB_CLUSTER_NAME=$name "${command[@]}" &
  child=$!
  local rc=0
  wait "$child" || rc=$?
  child=
  return $rc
}

parse "$@"
case $cmd in
  up) up ;;
  down) down ;;
  status) status ;;
  with) with ;;
esac
