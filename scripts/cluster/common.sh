# Shared settings of scripts/cluster/{up,down,import-images}.sh: where the cluster lives and what it is.
# Sourced, not run.

K8S_VERSION="${SWERUN_K8S_VERSION:-v1.34.4}"
ETCD_VERSION="${SWERUN_ETCD_VERSION:-v3.5.35}"
# The Go build, once per version (scripts/cluster/build.sh); survives cluster:down.
CACHE="${SWERUN_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/swerun/k8s-$K8S_VERSION}"
BIN="$CACHE/bin"
# Everything a running cluster holds (certs, etcd data, both nodes' containerd and kubelet, logs);
# cluster:down removes it.
STATE="${SWERUN_CLUSTER_DIR:-/tmp/swerun-cluster}"
KUBECONFIG_PATH="$STATE/admin.kubeconfig"
# The nodes: node1 in this machine's network namespace, node2 in a network namespace of its own, joined
# by a veth pair. The API server listens on node1's side of it, so both nodes (and this machine) reach it.
NODES="${SWERUN_CLUSTER_NODES:-2}"
HOST_IP=10.77.0.1
NODE2_IP=10.77.0.2
NETNS=swerun-node2
VETH_HOST=swerun-k8s0
VETH_NODE=swerun-k8s1
APISERVER_PORT=16443
ETCD_CLIENT_PORT=23790
ETCD_PEER_PORT=23800
# The namespace swerun's tests and the README's examples use.
NAMESPACE=swerun
PAUSE_IMAGE=localhost/pause:swerun

node_ip() { if [[ "$1" == 1 ]]; then echo "$HOST_IP"; else echo "$NODE2_IP"; fi; }
# Runs a command in node N's network namespace (node1: this machine's).
in_node() {
  local n="$1"; shift
  if [[ "$n" == 1 ]]; then "$@"; else ip netns exec "$NETNS" "$@"; fi
}
ctr_node() { local n="$1"; shift; ctr -a "$STATE/node$n/containerd/containerd.sock" -n k8s.io "$@"; }
log() { echo "cluster: $*" >&2; }
