#!/usr/bin/env bash
# The main job on this machine: install, build, sweep with the local ranks
# (one per GPU when there are GPUs, else two host ranks), record the results
# under results/, print the table; then the model's answer to "what would
# 10GbE vs 400G InfiniBand cost my training job": the default workload on the
# link just measured and on the two presets.
#   scripts/quickstart.sh [extra `fabricbench run` flags]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build

"$here/scripts/setup.sh"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target fabricbench

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$here/results"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=$here/results/local-$stamp.jsonl
ranks=2
echo "# fabricbench quick start: $ranks host ranks over MPI on $(hostname) -> $out" >&2
mpirun -np "$ranks" --oversubscribe --bind-to none "$build/fabricbench" run --out "$out" "$@"

workload=$here/profiles/workloads/llama-7b-zero1-2x8-h100.yaml
network=$("$here/scripts/measured-network.sh" "$out")
echo >&2
echo "# fabricbench model: $(basename "$workload" .yaml) on the link just measured ($network;" \
     "on one host it stands in for the network between nodes) and on two presets" >&2
"$build/fabricbench" model step -w "$workload" --network "$network" --network 1x10gbe --network 8x400g-ndr-ib
