#!/usr/bin/env bash
# Prints the fabricbench binary a script runs, the one place the scripts
# look for it (bash scripts run this file, plot.py too): FABRICBENCH when
# set; else this checkout's build/fabricbench (scripts/lib/../../build); else
# the installed one beside these scripts (PREFIX/share/fabricbench/scripts/lib
# -> PREFIX/bin); else fabricbench on the PATH. The checkout's and the
# installed copy's own binaries come before the PATH's: the scripts read what
# their own version of the binary writes.
# Exit 2, naming every place looked at and the fix, when none is there; a
# FABRICBENCH that names no executable is refused, not passed over.
#   scripts/lib/fabricbench-binary.sh SCRIPT-NAME   (the name its messages start with)
who=${1:-fabricbench-binary.sh}
lib=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
if [ -n "${FABRICBENCH:-}" ]; then
  [ -x "$FABRICBENCH" ] && [ -f "$FABRICBENCH" ] && { echo "$FABRICBENCH"; exit 0; }
  echo "$who: FABRICBENCH=$FABRICBENCH is not an executable file: set it to the fabricbench binary" >&2
  exit 2
fi
if [[ $lib == */share/fabricbench/scripts/lib ]]; then
  own=$(realpath -ms "$lib/../../../../bin/fabricbench")
else
  own=$(realpath -ms "$lib/../../build/fabricbench")
fi
[ -x "$own" ] && [ -f "$own" ] && { echo "$own"; exit 0; }
on_path=$(command -v fabricbench 2>/dev/null) && [ -n "$on_path" ] && { echo "$on_path"; exit 0; }
echo "$who: no fabricbench binary (looked for $own and on the PATH): build it (cmake --build build), install it, or set FABRICBENCH=path/to/fabricbench" >&2
exit 2
