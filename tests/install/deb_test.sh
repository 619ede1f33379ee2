#!/usr/bin/env bash
# `cpack -G DEB` from the build tree, then the packages unpacked with
# `dpkg-deb -x` into a fresh root and run from there, outside the checkout:
# their dependencies are packages that exist, name no CUDA, and the unpacked
# binary lists the profiles, runs 2 ranks and loads the same plugins as the
# build tree's binary. Skips (77) only when cpack or the dpkg tools are absent.
#   deb_test.sh BUILD_DIR SOURCE_DIR MPIEXEC
. "$(dirname "$0")/common.sh"
build=$1 src=$2 mpiexec=$3
for tool in cpack dpkg-deb dpkg-shlibdeps dpkg-query; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (apt-get install cmake dpkg-dev)"; exit 77; }
done
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
core=$(ls "$tmp"/pkg/fabricbench_*.deb 2>/dev/null)
[ -n "$core" ] || { cat "$tmp/cpack.log"; fail "cpack made no fabricbench_*.deb"; }
gpu=$(ls "$tmp"/pkg/fabricbench-gpu_*.deb 2>/dev/null)

depends=$(dpkg-deb -f "$core" Depends)
echo "fabricbench Depends: $depends"
for want in libopenmpi libyaml-cpp openmpi-bin libstdc++6; do
  grep -q "$want" <<<"$depends" || fail "fabricbench's Depends has no $want: $depends"
done
! grep -qiE 'cuda|nccl|cublas' <<<"$depends" || fail "the core package depends on CUDA: $depends"
# Every package named is installed here, or provided by one that is (spdlog's
# libspdlog1.10-fmt9): the names are real, not guessed.
provided=$(dpkg-query -W -f='${Provides}\n' 2>/dev/null | tr ',' '\n' | sed 's/(.*//; s/ //g')
for p in $(tr ',|' '\n\n' <<<"$depends" | sed 's/(.*//; s/ //g' | grep .); do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || grep -qx "$p" <<<"$provided" ||
    fail "Depends names $p, which no package installed here is or provides"
done
contents=$(dpkg-deb -c "$core") || fail "dpkg-deb -c $core"
grep -q ' ./usr/bin/fabricbench$' <<<"$contents" || fail "$core has no usr/bin/fabricbench"
grep -q ' ./usr/share/man/man1/fabricbench.1.gz$' <<<"$contents" || fail "$core has no man page (gzip'd)"
! grep -q '/lib/fabricbench/' <<<"$contents" || fail "the core package carries the GPU plugins"

root=$tmp/root
dpkg-deb -x "$core" "$root" || fail "dpkg-deb -x $core"
if [ -n "$gpu" ]; then
  grep -qF "fabricbench (= " <<<"$(dpkg-deb -f "$gpu" Depends)" || fail "fabricbench-gpu does not depend on its fabricbench"
  dpkg-deb -x "$gpu" "$root" || fail "dpkg-deb -x $gpu"
fi
fb=$root/usr/bin/fabricbench
# No run path into other folders (Debian policy; lintian's custom-library-search-path):
# the binary has none, a plugin only its own folder.
if command -v readelf >/dev/null; then
  for elf in "$fb" "$root"/usr/lib/fabricbench/*.so; do
    [ -e "$elf" ] || continue
    paths=$(readelf -d "$elf" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p')
    case $elf in
      *.so) [ -z "$paths" ] || [ "$paths" = '$ORIGIN' ] || fail "$(basename "$elf") carries run path '$paths'" ;;
      *) [ -z "$paths" ] || fail "the packaged binary carries run path '$paths'" ;;
    esac
  done
  echo "ok: no run path into other folders in the packaged binary and plugins"
fi
lists_shipped_profiles "$fb" "$src" "$root/usr/share/fabricbench/profiles"
two_rank_run "$fb" "$mpiexec"
# Each plugin the build tree's binary loads, the unpacked one loads too (stripped or not).
reference=$("$build/fabricbench" --version | sed -n '/^  plugins/,/^  backends/p' | grep -o '^    [a-z-]* *loaded' || true)
unpacked=$(outside "$fb" --version | sed -n '/^  plugins/,/^  backends/p' | grep -o '^    [a-z-]* *loaded' || true)
[ "$reference" = "$unpacked" ] || fail "plugins loaded: build tree [$reference], unpacked .deb [$unpacked]"
echo "ok: the unpacked packages load the plugins the build tree loads: ${unpacked:-none}" | tr -s ' \n' ' '
echo
echo "deb sizes: $(du -h "$core" | cut -f1) $(basename "$core")${gpu:+, $(du -h "$gpu" | cut -f1) $(basename "$gpu")};" \
  "unpacked binary $(du -h "$fb" | cut -f1) (stripped)"
