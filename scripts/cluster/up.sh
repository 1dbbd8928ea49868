#!/usr/bin/env bash
# `npm run cluster:up`: starts a real Kubernetes cluster on this machine for swerun's Kubernetes tests.
#
# - etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubelet built from their Go modules
#   once per version (build.sh, cached in $CACHE);
# - each node is Debian's containerd (a state, root and socket of its own beside any Docker daemon), runc
#   and the CNI plugins; node1 runs in this machine's network namespace, node2 in one of its own;
# - certificates made with openssl; the pause image built here, images imported offline;
# - the kubelets' cgroups under /swerun-nodeN, their files under $STATE.
# Usage: up.sh [DOCKER_IMAGE...]   (the images are imported into every node: `docker save` + `ctr import`)
# Prints the admin kubeconfig's path as its last line. Needs root. `npm run cluster:down` undoes it all.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
source "$here/common.sh"
# shellcheck source=certs.sh
source "$here/certs.sh"

die() { echo "cluster:up: $*" >&2; exit 1; }
[[ "$(id -u)" == 0 ]] || die "needs root (it starts containerd and kubelets)"
for tool in containerd containerd-shim-runc-v2 runc ctr openssl ip nsenter curl; do
  command -v "$tool" >/dev/null || die "$tool is missing (apt-get install containerd runc iproute2 openssl curl util-linux)"
done
[[ -x /usr/lib/cni/bridge ]] || die "the CNI plugins are missing (apt-get install containernetworking-plugins)"
[[ "$NODES" == 1 || "$NODES" == 2 ]] || die "SWERUN_CLUSTER_NODES must be 1 or 2"

# api PATH [CURL ARGS...]: the API server as the admin (no kubectl needed).
api() {
  local path="$1"; shift
  curl -fsS --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key" \
    "https://$HOST_IP:$APISERVER_PORT$path" "$@"
}

# Already up: say so (the same last line) and import the images asked for.
if [[ -f "$STATE/up" ]] && api /readyz >/dev/null 2>&1; then
  "$here/import-images.sh" "$@"
  log "already running ($STATE)"
  echo "$KUBECONFIG_PATH"
  exit 0
fi
if [[ -e "$STATE" ]]; then
  log "removing what an earlier cluster left in $STATE"
  "$here/down.sh"
fi

started=$(date +%s)
mkdir -p "$CACHE"
if [[ ! -f "$BIN/.complete" ]]; then
  log "building Kubernetes $K8S_VERSION and etcd $ETCD_VERSION into $CACHE (once per version; see build.log there)"
  build_start=$(date +%s)
  nice -n 10 "$here/build.sh" "$CACHE" >"$CACHE/build.log" 2>&1 || { tail -20 "$CACHE/build.log" >&2; die "the build failed (log: $CACHE/build.log)"; }
  log "built in $(($(date +%s) - build_start)) s"
fi

mkdir -p "$STATE"/{pids,logs,etcd}
touch "$STATE/starting"
# The kubelets set these host sysctls (protectKernelDefaults: false); cluster:down puts them back.
sysctl -n vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops \
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes | paste -sd' ' >"$STATE/sysctls.orig"

# start NAME NODE COMMAND...: a daemon in its own session, in node NODE's network namespace, logged.
start() {
  local name="$1" node="$2"; shift 2
  local prefix=()
  if [[ "$node" == 2 ]]; then prefix=(nsenter "--net=/var/run/netns/$NETNS"); fi
  setsid "${prefix[@]}" "$@" >"$STATE/logs/$name.log" 2>&1 < /dev/null &
  echo $! >"$STATE/pids/$name.pid"
}
# wait_for WHAT SECONDS COMMAND...: polls COMMAND until it succeeds (a bring-up script has nothing to wait on).
wait_for() {
  local what="$1" seconds="$2"; shift 2
  local deadline=$(($(date +%s) + seconds))
  until "$@" >/dev/null 2>&1; do
    if (($(date +%s) > deadline)); then die "$what not ready after ${seconds}s (logs: $STATE/logs)"; fi
    sleep 0.5
  done
}

# --- network: node2's namespace and the veth pair the API server listens on
ip netns add "$NETNS"
ip link add "$VETH_HOST" type veth peer name "$VETH_NODE"
ip link set "$VETH_NODE" netns "$NETNS"
ip addr add "$HOST_IP/24" dev "$VETH_HOST"
ip link set "$VETH_HOST" up
ip netns exec "$NETNS" ip addr add "$NODE2_IP/24" dev "$VETH_NODE"
ip netns exec "$NETNS" ip link set "$VETH_NODE" up
ip netns exec "$NETNS" ip link set lo up

for ((n = 1; n <= NODES; n++)); do mkdir -p "$STATE/node$n"/{containerd,cni/net.d,cni/ipam,kubelet,pod-logs,runc}; done
make_certs

# --- etcd (plain http on loopback; no fsync: a test cluster's data is thrown away)
start etcd 1 "$BIN/etcd" --name swerun --data-dir "$STATE/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "swerun=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --log-level warn

# --- containerd per node, and the pause image in each
for ((n = 1; n <= NODES; n++)); do
  d="$STATE/node$n"
  cat >"$d/cni/net.d/10-swerun.conflist" <<CNI
{"cniVersion":"1.0.0","name":"swerun-isolated","plugins":[{"type":"bridge","bridge":"swerun-cni$n","isGateway":false,"ipMasq":false,"hairpinMode":false,"ipam":{"type":"host-local","ranges":[[{"subnet":"10.244.$n.0/24"}]],"dataDir":"$d/cni/ipam"}}]}
CNI
  cat >"$d/containerd/config.toml" <<TOML
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
[grpc]
  address = "$d/containerd/containerd.sock"
[ttrpc]
  address = ""
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Lowering oom_score_adj needs CAP_SYS_RESOURCE, which this machine withholds: without this every
  # sandbox fails with "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$d/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni/net.d"
TOML
  start "containerd$n" "$n" containerd --config "$d/containerd/config.toml"
done
for ((n = 1; n <= NODES; n++)); do
  wait_for "containerd on node$n" 60 ctr_node "$n" version
  ctr_node "$n" images import --no-unpack=false "$CACHE/pause.tar" >/dev/null
  ctr_node "$n" images tag --force docker.io/swerun-k8s/pause:1 "$PAUSE_IMAGE" >/dev/null
done

# --- control plane
PKI="$STATE/pki"
wait_for etcd 60 curl -fsS "http://127.0.0.1:$ETCD_CLIENT_PORT/health"
start kube-apiserver 1 "$BIN/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_CLIENT_PORT" --bind-address "$HOST_IP" --advertise-address "$HOST_IP" \
  --secure-port "$APISERVER_PORT" --service-cluster-ip-range 10.96.0.0/24 \
  --client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
  --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP \
  --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
  --service-account-issuer https://kubernetes.default.svc \
  --authorization-mode Node,RBAC --allow-privileged=false --profiling=false --v=0
wait_for kube-apiserver 180 api /readyz
# Short node-loss times, so that a test's lost node is noticed in seconds (defaults: about 50 s).
start kube-controller-manager 1 "$BIN/kube-controller-manager" \
  --kubeconfig "$STATE/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" \
  --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
  --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
  --use-service-account-credentials --leader-elect=false --secure-port 0 \
  --node-monitor-period 2s --node-monitor-grace-period 16s --v=0
start kube-scheduler 1 "$BIN/kube-scheduler" --kubeconfig "$STATE/scheduler.kubeconfig" \
  --authentication-kubeconfig "$STATE/scheduler.kubeconfig" --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
  --leader-elect=false --secure-port 0 --v=0

# --- kubelets
for ((n = 1; n <= NODES; n++)); do
  d="$STATE/node$n"
  # The kubelet wants its cgroup root to exist; a cpuset cgroup starts with no CPUs in cgroup v1.
  for hierarchy in /sys/fs/cgroup/*/; do
    [[ "$(stat -fc %T "$hierarchy")" == cgroupfs ]] || continue
    mkdir -p "$hierarchy/swerun-node$n"
  done
  if [[ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]]; then
    cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/swerun-node$n/cpuset.cpus"
    cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/swerun-node$n/cpuset.mems"
  fi
  cat >"$d/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(node_ip "$n")
port: 10250
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: AlwaysAllow}
tlsCertFile: $PKI/node$n-serving.crt
tlsPrivateKeyFile: $PKI/node$n-serving.key
cgroupDriver: cgroupfs
cgroupRoot: /swerun-node$n
failCgroupV1: false
containerRuntimeEndpoint: unix://$d/containerd/containerd.sock
failSwapOn: false
oomScoreAdj: 0
podLogsDir: $d/pod-logs
# containerd 1.6 does not say which images are pinned: no image GC, so the pause image stays.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "2%", imagefs.available: "2%", nodefs.inodesFree: "2%"}
serializeImagePulls: false
nodeStatusUpdateFrequency: 4s
nodeStatusReportFrequency: 4s
nodeLeaseDurationSeconds: 12
resolvConf: /etc/resolv.conf
maxPods: 110
# No KUBE-FIREWALL and canary chains in this machine's iptables (nothing here needs them: no kube-proxy).
makeIPTablesUtilChains: false
YAML
  start "kubelet$n" "$n" "$BIN/kubelet" --config "$d/kubelet.yaml" --kubeconfig "$d/kubelet.kubeconfig" \
    --root-dir "$d/kubelet" --hostname-override "swerun-node$n" --node-ip "$(node_ip "$n")" --v=0
done

node_ready() { api "/api/v1/nodes/$1" | tr -d ' \n' | grep -q '"type":"Ready","status":"True"'; }
for ((n = 1; n <= NODES; n++)); do
  wait_for "node swerun-node$n" 180 node_ready "swerun-node$n"
done
api /api/v1/namespaces -X POST -H 'Content-Type: application/json' \
  -d "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$NAMESPACE\"}}" >/dev/null
wait_for "the default service account" 120 api "/api/v1/namespaces/$NAMESPACE/serviceaccounts/default"

"$here/import-images.sh" "$@"
{
  echo "KUBECONFIG=$KUBECONFIG_PATH"
  echo "SWERUN_CLUSTER_NODES=$NODES"
  echo "SWERUN_CLUSTER_NAMESPACE=$NAMESPACE"
} >"$STATE/cluster.env"
rm -f "$STATE/starting"
touch "$STATE/up"
log "up in $(($(date +%s) - started)) s: $NODES node(s), namespace $NAMESPACE; kubectl --kubeconfig $KUBECONFIG_PATH get nodes"
echo "$KUBECONFIG_PATH"
