#!/usr/bin/env bash
# The emulated cluster the `cluster` tests share (a ctest fixture):
#   fixture.sh up     4 nodes, links shaped to 1 Gbit/s, node 3 to 250 Mbit/s
#   fixture.sh down   take it down and verify nothing is left
# FB_CLUSTER_NAME and FB_CLUSTER_DIR come from CMake: unique per build tree, so
# engineers testing on the same machine never share or remove each other's.
# Exit 77 (skipped) when not root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
emulate=$here/../../scripts/emulate-cluster.sh
: "${FB_CLUSTER_NAME:?set by CMake}" "${FB_CLUSTER_DIR:?set by CMake}"

if [ "$(id -u)" -ne 0 ]; then
  echo "fixture.sh: skipped: emulated nodes need root (network namespaces, tc)" >&2
  exit 77
fi

leftovers() {
  ip netns list | awk '{print $1}' | grep -E "^$FB_CLUSTER_NAME-" || true
  ip -o link show | awk -F': ' '{print $2}' | grep -E "^$FB_CLUSTER_NAME" || true
}

case ${1:-} in
  up)
    # A run killed before its cleanup left this build tree's cluster behind: remove it first.
    "$emulate" down --name "$FB_CLUSTER_NAME" >/dev/null 2>&1 || true
    "$emulate" up 4 --name "$FB_CLUSTER_NAME" --rate 1gbit --shape 3=250mbit
    "$emulate" status --name "$FB_CLUSTER_NAME"
    ;;
  down)
    rc=0
    "$emulate" down --name "$FB_CLUSTER_NAME" || rc=1
    left=$(leftovers)
    if [ -n "$left" ]; then
      echo "fixture.sh: left behind after down: $left" >&2
      rc=1
    fi
    [ ! -e "$FB_CLUSTER_DIR" ] || { echo "fixture.sh: $FB_CLUSTER_DIR still exists" >&2; rc=1; }
    [ $rc -ne 0 ] || echo "fixture.sh: cluster $FB_CLUSTER_NAME gone: no namespace, link, process or file left"
    exit $rc
    ;;
  *)
    echo "usage: fixture.sh up|down" >&2
    exit 2
    ;;
esac
