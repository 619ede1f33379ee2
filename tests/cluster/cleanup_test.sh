#!/usr/bin/env bash
# emulate-cluster.sh cleans up after itself: when the command it wraps fails
# and leaves processes in the nodes, when it is killed mid-run, and it refuses
# to run without root. Every check fails the test with a message.
#   cleanup_test.sh NAME   (a cluster name of its own, from CMake)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
emulate=$here/../../scripts/emulate-cluster.sh
name=${1:?cluster name}
work=$(mktemp -d /tmp/fb_cleanup_XXXXXX)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" -ne 0 ]; then
  echo "cleanup_test.sh: skipped: emulated nodes need root" >&2
  exit 77
fi

# Nothing of cluster `name` may remain: no namespace, no process inside the
# namespaces whose inodes were noted while it ran, no state folder.
check_gone() {
  local what=$1 left
  left=$(ip netns list | awk '{print $1}' | grep -E "^$name-" | tr '\n' ' ')
  [ -z "$left" ] || fail "$what: namespaces left: $left"
  if [ -s "$work/inodes" ]; then
    left=$(stat -L -c '%i %n' /proc/[0-9]*/ns/net 2>/dev/null | grep -wF -f "$work/inodes" | tr '\n' ' ')
    [ -z "$left" ] || fail "$what: processes left in the cluster's namespaces: $left"
  else
    fail "$what: the command never ran inside the cluster"
  fi
  [ ! -e "/run/fabricbench-emu/$name" ] || fail "$what: state folder /run/fabricbench-emu/$name left"
}

# 1. The command fails and leaves processes running inside both nodes.
: >"$work/inodes"
"$emulate" with 2 --name "$name" --rate 100mbit -- bash -c "
  for n in 1 2; do stat -L -c '%i' /run/netns/$name-n\$n >>'$work/inodes'; ip netns exec $name-n\$n sleep 600 & done
  sleep 0.5; exit 3" 2>"$work/err1"
rc=$?
[ $rc -eq 3 ] || fail "failing command: exit $rc, expected the command's 3 ($(cat "$work/err1"))"
check_gone "failing command"

# 2. The wrapper is killed (as a test timeout would) while its command runs.
: >"$work/inodes"
"$emulate" with 2 --name "$name" -- bash -c "
  for n in 1 2; do stat -L -c '%i' /run/netns/$name-n\$n >>'$work/inodes'; done
  ip netns exec $name-n1 sleep 600" 2>"$work/err2" &
pid=$!
for _ in $(seq 100); do [ "$(wc -w <"$work/inodes")" -eq 2 ] && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
rc=$?
[ $rc -eq 143 ] || fail "killed wrapper: exit $rc, expected 143 ($(cat "$work/err2"))"
check_gone "killed wrapper"

# 3. Not root: a clear refusal, exit 2, nothing made.
out=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$emulate" up 2 --name "$name" 2>&1)
rc=$?
[ $rc -eq 2 ] || fail "non-root: exit $rc, expected 2"
[[ $out == *"must run as root"* ]] || fail "non-root: message was '$out'"
[ -z "$(ip netns list | grep -E "^$name-")" ] || fail "non-root: namespaces were made"

# 4. Bad input is refused before anything is made.
for args in "up 1 --name $name" "up 3 --name $name --shape 9=1gbit" "up 3 --name $name --rate fast" "up 3 --name Bad_Name"; do
  out=$("$emulate" $args 2>&1)
  rc=$?
  [ $rc -eq 2 ] || fail "'$args': exit $rc, expected 2 ($out)"
done
[ -z "$(ip netns list | grep -iE "^($name|bad_name)-")" ] || fail "bad input: namespaces were made"

[ $failures -eq 0 ] && echo "cleanup_test.sh: all checks passed"
exit $((failures > 0))
