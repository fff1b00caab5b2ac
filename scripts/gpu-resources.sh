#!/usr/bin/env bash
# Writes a CTest resource spec with one "gpus" entry (1 slot) per GPU of this machine, so that
#   scripts/gpu-resources.sh > build/gpus.json
#   ctest --test-dir build --resource-spec-file build/gpus.json -j 8
# runs each GPU test (RESOURCE_GROUPS "gpus:1", cli/CMakeLists.txt) on a GPU of its own, several
# GPUs at once; the binary makes the GPU CTest assigns its device 0 (gpu/assigned_gpu.h).
# The ids are device indices: the entries of CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES when set
# (the binary sets the variable to one of them), else every GPU that `nvidia-smi -L` or
# `rocm-smi --showid` lists. Usage: scripts/gpu-resources.sh [OUT.json]  (default: stdout)
set -euo pipefail

ids=()
visible=${CUDA_VISIBLE_DEVICES:-${HIP_VISIBLE_DEVICES:-}}
if [[ -n "$visible" ]]; then
  IFS=, read -r -a ids <<<"$visible"
  for id in "${ids[@]}"; do
    # UUIDs (GPU-...) and MIG names cannot be CTest ids (lowercase, digits, '_' only).
    [[ "$id" =~ ^[0-9]+$ ]] || { echo "gpu-resources.sh: visible device '$id' is not an index; give CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES as indices (0,1,...)" >&2; exit 1; }
  done
elif command -v nvidia-smi >/dev/null; then
  # "GPU 0: NVIDIA H200 (UUID: GPU-...)"; MIG instances are listed indented under their GPU.
  while read -r id; do ids+=("$id"); done < <(nvidia-smi -L | sed -n 's/^GPU \([0-9][0-9]*\): .*/\1/p')
elif command -v rocm-smi >/dev/null; then
  # "GPU[0]		: Device ID: 0x74a1", one line per device and field.
  while read -r id; do ids+=("$id"); done < <(rocm-smi --showid | sed -n 's/^GPU\[\([0-9][0-9]*\)\].*/\1/p' | sort -un)
else
  echo "gpu-resources.sh: neither nvidia-smi nor rocm-smi found, and CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES unset: no GPU to list" >&2
  exit 1
fi
if [[ ${#ids[@]} -eq 0 ]]; then
  echo "gpu-resources.sh: no GPU found" >&2
  exit 1
fi

entries=()
for id in "${ids[@]}"; do entries+=("{\"id\": \"$id\", \"slots\": 1}"); done
joined=$(printf ', %s' "${entries[@]}")
spec="{\"version\": {\"major\": 1, \"minor\": 0}, \"local\": [{\"gpus\": [${joined:2}]}]}"
if [[ $# -ge 1 ]]; then
  printf '%s\n' "$spec" >"$1"
else
  printf '%s\n' "$spec"
fi
