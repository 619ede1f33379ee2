#!/usr/bin/env bash
# Install the Debian packages fabricbench needs. Idempotent: prints nothing
# and exits 0 when everything is already present.
#   scripts/setup.sh             build, run, test and plot (what scripts/test.sh and CI need)
#   scripts/setup.sh --runtime   build and run only: no Slurm, munge, clang, test
#                                libraries or benchmark tools; configure with
#                                -DFABRICBENCH_TESTS=OFF -DFABRICBENCH_BENCH=OFF
#   scripts/setup.sh [--runtime] --list   print the packages, one a line, install nothing
# CUDA and NCCL are not Debian packages: they come from the CUDA toolkit
# (/usr/local/cuda or $CUDA_HOME); the build detects them and goes on without.
set -euo pipefail

# What building and running fabricbench needs (plot.py included).
runtime=(
  build-essential cmake ninja-build pkg-config git
  openmpi-bin libopenmpi-dev
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  iproute2 procps
  python3 python3-matplotlib
)
# What only the tests, benchmarks and sanitizer builds need: the test and
# benchmark libraries, clang (sanitizers, fuzzing), a Slurm with munge and
# pmix (the slurm label), the tools the cluster and storage tests and the
# figure scripts call, a browser to open `report html` pages headless
# (tests/report/browser_test.py skips without it), and a font named here
# rather than left to fontconfig's alternatives (its recommended
# fonts-liberation is not installed with --no-install-recommends), and Node.js
# with python3-yaml for the Kubernetes manifest's offline validation.
test=(
  libbenchmark-dev libgtest-dev libgmock-dev
  clang libclang-rt-14-dev
  slurm-wlm munge libpmix-dev
  iperf3 jq bc fio sshfs openssh-server
  chromium fonts-dejavu-core
  nodejs python3-yaml
)
# npm packages for the tests, into build-tools/npm (ignored by git):
# kubernetes-models validates scripts/kubernetes against the API's schemas
# offline (tests/kubernetes/manifest_test.py).
npm_tools=(kubernetes-models@5.1.0)
here=$(cd "$(dirname "$0")/.." && pwd)

only_runtime=0 list=0
for arg in "$@"; do
  case $arg in
    --runtime) only_runtime=1 ;;
    --list) list=1 ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg': use --runtime, --list or --help" >&2; exit 2 ;;
  esac
done
packages=("${runtime[@]}")
[ "$only_runtime" -eq 1 ] || packages+=("${test[@]}")
if [ "$list" -eq 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

npm_tools() {
  [ "$only_runtime" -eq 0 ] && [ ! -d "$here/build-tools/npm/node_modules/kubernetes-models" ] || return 0
  # NodeSource's nodejs carries npm; Debian's has it in a package of its own.
  command -v npm >/dev/null || ${SUDO-} apt-get install -y -qq --no-install-recommends npm >/dev/null
  echo "setup.sh: installing npm ${npm_tools[*]} into build-tools/npm" >&2
  npm install --prefix "$here/build-tools/npm" --no-audit --no-fund --silent "${npm_tools[@]}" >/dev/null
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  npm_tools
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
  command -v sudo >/dev/null || { echo "setup.sh: missing packages (${missing[*]}) and not root; run as root, or build without root (docs/install.md: Without root)" >&2; exit 2; }
else
  SUDO=
fi
echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
npm_tools
