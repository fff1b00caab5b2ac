#!/usr/bin/env bash
# Installs the Debian packages mlacheck's build needs. Idempotent: packages already present are
# left alone, and apt is only called when something is missing. Needs root (or sudo).
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config python3 python3-venv
  libeigen3-dev libcli11-dev nlohmann-json3-dev libfmt-dev librandom123-dev libstb-dev
  libxxhash-dev libgtest-dev libgmock-dev librapidcheck-dev
  # HIP device-code compile check for gfx90a/gfx942/gfx950 (no AMD GPU needed, nothing links):
  clang-22 lld-22 libamdhip64-dev
  # The ASan + UBSan build and the libFuzzer targets (scripts/sanitize.sh, scripts/fuzz.sh, both
  # clang-22): the sanitizer and libFuzzer runtimes, LLVM's OpenMP (clang does not use g++'s libgomp),
  # and llvm-symbolizer-22, without which a sanitizer report's stack has addresses, not lines:
  libclang-rt-22-dev libomp-22-dev llvm-22
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
