#!/usr/bin/env bash
# ctest's fuzz runner: fuzz a harness for a bounded time from its seed corpus.
# New inputs go to a work folder in the build tree, never the source tree; a
# crash, leak, UB report, slow input (>10 s) or >2 GB of memory fails the
# test and leaves the input in <work>/artifacts.
#   run_fuzzer.sh HARNESS SEED_DIR WORK_DIR SECONDS   (FABRICBENCH_FUZZ_SECONDS overrides SECONDS)
# SEED_DIR.dict, when present, is passed as the libFuzzer dictionary.
set -euo pipefail
harness=$1 seeds=$2 work=$3
seconds=${FABRICBENCH_FUZZ_SECONDS:-$4}
mkdir -p "$work/corpus" "$work/artifacts"
dict=()
[ -f "$seeds.dict" ] && dict=(-dict="$seeds.dict")  # corpus/<name>.dict: tokens worth trying
exec "$harness" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
  -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds"
