#!/usr/bin/env bash
# Imports Docker images into every node of the test cluster, offline: `docker save` piped into `ctr import`
# (the kubelets then find them; containerd names them docker.io/<name> as the kubelet normalises them).
# Content a node has already is not stored twice.
# Usage: import-images.sh DOCKER_IMAGE...
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
source "$here/common.sh"

[[ $# -gt 0 ]] || exit 0
nodes=$(grep -s '^SWERUN_CLUSTER_NODES=' "$STATE/cluster.env" | cut -d= -f2)
nodes="${nodes:-$NODES}"
for image in "$@"; do
  docker image inspect "$image" >/dev/null || { echo "import-images: no Docker image $image" >&2; exit 1; }
  for ((n = 1; n <= nodes; n++)); do
    docker save "$image" | ctr_node "$n" images import - >/dev/null
  done
done
