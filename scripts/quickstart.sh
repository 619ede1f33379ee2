#!/usr/bin/env bash
# The main job on this machine: install, build, sweep with two host ranks
# over MPI and, when there are GPUs, with NCCL (one rank per GPU) and the CUDA
# copy paths; record the results under results/, print the tables; then the
# model's answer to "what would 10GbE vs 400G InfiniBand cost my training
# job": the default workload on the host link just measured and on the two
# presets.
#   scripts/quickstart.sh [extra `fabricbench run` flags, e.g. -e 64K for a short sweep]
# FABRICBENCH_BUILD: the build folder (default build/; CI passes its test
# tree, so nothing is compiled again); FABRICBENCH_RESULTS: where the records
# go (default results/).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/usage.sh" || exit 2
help_if_asked "$0" "$@"
here=$(cd "$(dirname "$0")/.." && pwd)
build=${FABRICBENCH_BUILD:-$here/build}
results=${FABRICBENCH_RESULTS:-$here/results}

"$here/scripts/setup.sh"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target fabricbench

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$results"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=$results/local-$stamp.jsonl
ranks=2
echo "# fabricbench quick start: $ranks host ranks over MPI on $(hostname) -> $out" >&2
mpirun -np "$ranks" --oversubscribe --bind-to none "$build/fabricbench" run --out "$out" "$@"

# The GPUs, when there are any: NCCL with one rank per GPU (NCCL refuses two
# ranks on one GPU), then the copy paths of the first GPU. A GPU sweep that
# cannot run (no NCCL in this build, no usable driver) says why and the quick
# start goes on.
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -gt 0 ]; then
  gpu_out=$results/local-$stamp-nccl.jsonl
  echo "# fabricbench quick start: NCCL over $gpus GPU(s) -> $gpu_out" >&2
  mpirun -np "$gpus" --bind-to none "$build/fabricbench" run --backend nccl -e 1G --out "$gpu_out" "$@" ||
    echo "# the NCCL sweep did not run (above: why); the host results stand" >&2
  mpirun -np 1 --bind-to none "$build/fabricbench" run --backend cuda -b 1M -e 1G -f 4 \
    --out "$results/local-$stamp-cuda.jsonl" ||
    echo "# the CUDA copy sweep did not run (above: why)" >&2
fi

workload=$here/profiles/workloads/llama-7b-zero1-2x8-h100.yaml
network=$(FABRICBENCH="$build/fabricbench" "$here/scripts/measured-network.sh" "$out")
echo >&2
echo "# fabricbench model: $(basename "$workload" .yaml) on the link just measured ($network;" \
     "on one host it stands in for the network between nodes) and on two presets" >&2
"$build/fabricbench" model step -w "$workload" --network "$network" --network 1x10gbe --network 8x400g-ndr-ib
echo "# the binary is $build/fabricbench: export PATH=$build:\$PATH to call it as fabricbench, as README.md" \
     "does, or install it (docs/install.md)" >&2
