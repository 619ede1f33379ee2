#!/usr/bin/env bash
# The core binary links no CUDA library, so it starts on a CPU-only login
# node; installed without its plugins (the core component alone), or with an
# empty plugin folder, it says which plugin is missing and why, and a
# `--backend nccl` run is refused (exit 2) with that reason.
#   no_cuda_link_test.sh BUILD_DIR MPIEXEC
. "$(dirname "$0")/common.sh"
build=$1 mpiexec=$2
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" --component core >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install --component core"; }
fb=$prefix/bin/fabricbench
cuda_libs='lib(cuda|cudart|nccl|cublas|cublasLt|nvidia-ml)\.so'
needed=$(readelf -d "$fb" | grep '(NEEDED)') || fail "readelf -d $fb lists no NEEDED entries"
! grep -qE "$cuda_libs" <<<"$needed" || fail "$fb links CUDA directly:"$'\n'"$(grep -E "$cuda_libs" <<<"$needed")"
resolved=$(ldd "$fb") || fail "ldd $fb: $resolved"
! grep -qE "$cuda_libs" <<<"$resolved" || fail "$fb pulls CUDA in indirectly:"$'\n'"$(grep -E "$cuda_libs" <<<"$resolved")"
echo "ok: $(wc -l <<<"$needed") NEEDED libraries, none of CUDA"

built_nccl=$(outside "$fb" --version | sed -n 's/^  built with   CUDA [^,]*, NCCL //p')
# $1: what the plugin folder is; $2: what the nccl line must say.
missing_plugin_is_named() {
  local what=$1 says=$2 version line run
  version=$(outside "$fb" --version) || fail "--version with $what exited $?"
  line=$(grep '^    nccl ' <<<"$version" | head -n 1)
  grep -q 'not loaded: ..*' <<<"$line" || fail "--version with $what: nccl line '$line'"
  grep -qF "$says" <<<"$line" || fail "--version with $what: nccl line '$line' does not say '$says'"
  run=$(outside timeout 60 "$mpiexec" --allow-run-as-root --oversubscribe -np 1 "$fb" run --progress off --backend nccl 2>&1)
  local rc=$?
  [ "$rc" -eq 2 ] || fail "--backend nccl with $what exited $rc, not 2: $run"
  grep -qF "backend nccl is not usable: " <<<"$run" || fail "--backend nccl with $what: $run"
  grep -qF "${line#*not loaded: }" <<<"$run" || fail "--backend nccl with $what does not give --version's reason '${line#*not loaded: }': $run"
  echo "ok: $what: ${line#"${line%%[! ]*}"}"
}
if [ "$built_nccl" = no ]; then
  # This build made no nccl plugin: the reason is the build's, folder or not.
  missing_plugin_is_named "no plugin folder" "built without"
  mkdir -p "$prefix/lib/fabricbench"
  missing_plugin_is_named "an empty plugin folder" "built without"
else
  missing_plugin_is_named "no plugin folder" "libfabricbench-nccl.so: no plugin folder ($prefix/lib/fabricbench"
  mkdir -p "$prefix/lib/fabricbench"
  missing_plugin_is_named "an empty plugin folder" "libfabricbench-nccl.so not found in $prefix/lib/fabricbench"
fi
