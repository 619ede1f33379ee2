#!/usr/bin/env bash
# Install every Debian package fabricbench builds, tests and plots with.
# Idempotent: prints nothing and exits 0 when everything is already present.
# CUDA and NCCL are not Debian packages: they come from the CUDA toolkit
# (/usr/local/cuda or $CUDA_HOME); the build detects them and goes on without.
set -euo pipefail

# What building and running fabricbench needs.
runtime=(
  build-essential cmake ninja-build pkg-config git
  openmpi-bin libopenmpi-dev libpmix-dev
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  libbenchmark-dev libgtest-dev libgmock-dev libhwloc-dev
  clang libclang-rt-14-dev
  slurm-wlm munge
  iproute2 iperf3 jq bc procps
  python3 python3-matplotlib
)
# What only the tests need: a browser to open `report html` pages headless
# (tests/report/browser_test.py skips without it), and a font named here
# rather than left to fontconfig's alternatives (its recommended
# fonts-liberation is not installed with --no-install-recommends).
test=(
  chromium fonts-dejavu-core
)
packages=("${runtime[@]}" "${test[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
  command -v sudo >/dev/null || { echo "setup.sh: missing packages (${missing[*]}) and not root; run as root" >&2; exit 2; }
else
  SUDO=
fi
echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
