#!/usr/bin/env bash
# docs/model-guide.md's three model plots from one results file:
#   busbw    the sweep's busbw and time per op and scope, log-log, the spread
#            over iterations shaded (plot.py reads the record through the
#            binary, FABRICBENCH)
#   scaling  efficiency vs nodes of the default workload on the measured link
#            (standing in for the network between nodes) and two presets
#   quotes   compute vs exposed communication per quote: the 10GbE-vs-400G IB
#            example quotes (H100, as the workload) plus vendor A's price on the
#            measured link (or QUOTES.yaml as is)
#   scripts/model-plots.sh RESULTS.jsonl OUTDIR [WORKLOAD.yaml] [QUOTES.yaml]
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/usage.sh" || exit 2
help_if_asked "$0" "$@"
here=$(cd "$(dirname "$0")/.." && pwd)
fb=$("$here/scripts/lib/fabricbench-binary.sh" model-plots.sh)
results=${1:?usage: model-plots.sh RESULTS.jsonl OUTDIR [WORKLOAD.yaml] [QUOTES.yaml]}
outdir=${2:?usage: model-plots.sh RESULTS.jsonl OUTDIR [WORKLOAD.yaml] [QUOTES.yaml]}
workload=${3:-$here/profiles/workloads/llama-7b-zero1-2x8-h100.yaml}
mkdir -p "$outdir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The measured link (on one host: its rows stand in for the network).
network=$(FABRICBENCH="$fb" "$here/scripts/measured-network.sh" "$results")
quotes=${4:-}
if [ -z "$quotes" ]; then
  quotes=$tmp/quotes.yaml
  cat "$here/profiles/quotes/h100-10gbe-vs-400g-ib.yaml" - >"$quotes" <<EOF
  - name: vendor-a-price-measured-link
    gpu: h100-sxm
    gpus_per_node: 8
    nodes: 2
    network: $(cd "$(dirname "$network")" && pwd)/$(basename "$network")
    price_per_gpu_hour: 2.00
EOF
fi

"$fb" model scale -w "$workload" --network "$network" --network 1x10gbe --network 8x400g-ndr-ib \
  --nodes 1,2,4,8,16 --format json >"$tmp/scale.json"
"$fb" model quotes -w "$workload" -q "$quotes" --format json >"$tmp/quotes.json"
FABRICBENCH="$fb" python3 "$here/scripts/plot.py" busbw "$results" -o "$outdir/busbw.png"
python3 "$here/scripts/plot.py" scaling "$tmp/scale.json" -o "$outdir/scaling.png"
python3 "$here/scripts/plot.py" quotes "$tmp/quotes.json" -o "$outdir/quotes.png"
