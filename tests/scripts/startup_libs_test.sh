#!/usr/bin/env bash
# fabricbench must not load cuBLAS (or cuBLAS Lt) when it starts: their static
# initialisers cost ~0.4 s in every process, every rank of every run, though
# only `gemm` (and `step`'s GPU compute) use them; gemm/cublas_loaded.hpp
# loads them on first use. Reads the dynamic loader's own list of what it
# loaded for `fabricbench --version`, so a library pulled in indirectly counts.
#   startup_libs_test.sh path/to/fabricbench
set -u
bin=$1
loaded=$(LD_DEBUG=files "$bin" --version 2>&1 >/dev/null | grep -o 'file=[^ ]*' | sort -u)
if [[ -z $loaded ]]; then
  echo "FAIL: LD_DEBUG=files listed nothing for $bin --version (cannot tell what it loads)"
  exit 1
fi
if grep -qi 'cublas' <<<"$loaded"; then
  echo "FAIL: $bin loads cuBLAS at start-up:"
  grep -i cublas <<<"$loaded"
  exit 1
fi
echo "ok: $(wc -l <<<"$loaded") libraries at start-up, none of them cuBLAS"
