#!/usr/bin/env bash
# A switch over one of fabricbench's enums lists every enumerator and has no
# `default:`, so that -Werror=switch makes a new enumerator a build error in
# every switch that must decide about it. `default:` stays only in switches
# over values from outside (an int stage, a character, NVML's integer ABI),
# one line per file below with the reason; any other is named here.
#   no_default_test.sh path/to/repo
set -u
root=$1
allowed=(
  "src/model/formulas.cpp 2"     # ZeRO stage, an int from the workload file (3 = stage 3)
  "src/topo/nvml_loader.cpp 2"   # NVML's value and link-end types, ints of its C ABI
  "src/report/html_text.cpp 1"   # a character of the escaped text
)
declare -A want
for a in "${allowed[@]}"; do want[${a% *}]=${a#* }; done
fail=0
while read -r count file; do
  [ "${want[$file]:-0}" = "$count" ] && { unset "want[$file]"; continue; }
  echo "FAIL: $file has $count 'default:' (allowed ${want[$file]:-0}): list the enumerators instead"
  grep -n '^[[:space:]]*default:' "$root/$file" | sed 's/^/  /'
  fail=1
  unset "want[$file]"
done < <(cd "$root" && grep -rc '^[[:space:]]*default:' src include --include='*.cpp' --include='*.hpp' --include='*.cu' |
         awk -F: '$2 > 0 {print $2, $1}')
for file in "${!want[@]}"; do
  echo "FAIL: $file is allowed ${want[$file]} 'default:' but has none: take it off the list"
  fail=1
done
[ "$fail" -eq 0 ] && echo "ok: 'default:' only where the switch is over a value from outside"
exit "$fail"
