#!/usr/bin/env bash
# `npm run cluster:down`: stops everything `cluster:up` started and removes what it made: the pods'
# containers, sandboxes and network namespaces, the daemons, node2's network namespace and the veth pair,
# the kubelets' cgroups, their log links, the host sysctls they changed (put back), and $STATE.
# The build cache ($CACHE) stays. Safe to run twice, and after a failed or half-done cluster:up.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=common.sh
source "$here/common.sh"

if [[ ! -e "$STATE" ]] && ! ip netns list 2>/dev/null | grep -qw "$NETNS"; then
  log "nothing to stop ($STATE does not exist)"
  exit 0
fi

# stop NAME: TERM, then KILL after 10 s, the daemon whose pid file is $STATE/pids/NAME.pid.
stop() {
  local file="$STATE/pids/$1.pid" pid
  [[ -f "$file" ]] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$pid" 2>/dev/null
  fi
  rm -f "$file"
}

stop kubelet2
stop kubelet1
netns_paths=()
for n in 1 2; do
  sock="$STATE/node$n/containerd/containerd.sock"
  [[ -S "$sock" ]] && ctr_node "$n" version >/dev/null 2>&1 || continue
  for task in $(ctr_node "$n" tasks ls -q 2>/dev/null); do ctr_node "$n" tasks kill -s SIGKILL "$task" >/dev/null 2>&1; done
  for task in $(ctr_node "$n" tasks ls -q 2>/dev/null); do ctr_node "$n" tasks delete -f "$task" >/dev/null 2>&1; done
  for container in $(ctr_node "$n" containers ls -q 2>/dev/null); do
    # A sandbox's network namespace, made by containerd's CRI plugin, is named in its OCI spec.
    while read -r path; do netns_paths+=("$path"); done < <(ctr_node "$n" containers info "$container" 2>/dev/null |
      grep -o '"path": *"/var/run/netns/cni-[^"]*"' | sed 's/.*"\(\/var\/run\/netns\/[^"]*\)"/\1/')
    ctr_node "$n" containers delete "$container" >/dev/null 2>&1
  done
done
for name in kube-scheduler kube-controller-manager kube-apiserver etcd containerd2 containerd1; do stop "$name"; done
# Shims of this cluster's containerd that outlived it (named by its socket's path, under $STATE).
for proc in /proc/[0-9]*; do
  if { tr '\0' ' ' <"$proc/cmdline"; } 2>/dev/null | grep -q -- "containerd-shim-runc-v2 .*-address $STATE/"; then
    kill -KILL "${proc#/proc/}" 2>/dev/null
  fi
done

# Mounts under $STATE (container root filesystems, sandbox /dev/shm, kubelet volumes), deepest first.
awk -v state="$STATE/" 'index($5, state) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r mount; do
  umount -l "$mount" 2>/dev/null
done
for path in "${netns_paths[@]}"; do
  umount "$path" 2>/dev/null
  rm -f "$path"
done
ip netns del "$NETNS" 2>/dev/null
ip link del "$VETH_HOST" 2>/dev/null
ip link del swerun-cni1 2>/dev/null

# The chains a kubelet adds to this machine's iptables when makeIPTablesUtilChains is on (a cluster:up of an
# earlier version of this script).
for ipt in iptables ip6tables; do
  command -v "$ipt" >/dev/null || continue
  "$ipt" -t filter -D INPUT -j KUBE-FIREWALL 2>/dev/null
  "$ipt" -t filter -D OUTPUT -j KUBE-FIREWALL 2>/dev/null
  for table in filter nat mangle; do
    for chain in KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT; do
      "$ipt" -t "$table" -F "$chain" 2>/dev/null && "$ipt" -t "$table" -X "$chain" 2>/dev/null
    done
  done
done

# The kubelets' cgroups (their pods' are inside), deepest first, once empty.
for root in /sys/fs/cgroup/*/swerun-node1 /sys/fs/cgroup/*/swerun-node2; do
  [[ -d "$root" ]] && find "$root" -depth -type d -exec rmdir {} + 2>/dev/null
done
# The kubelets link every container's log into /var/log/containers.
find /var/log/containers -maxdepth 1 -lname "$STATE/*" -delete 2>/dev/null

if [[ -f "$STATE/sysctls.orig" ]]; then
  read -r overcommit oom panic oops maxkeys maxbytes <"$STATE/sysctls.orig"
  sysctl -q -w vm.overcommit_memory="$overcommit" vm.panic_on_oom="$oom" kernel.panic="$panic" \
    kernel.panic_on_oops="$oops" kernel.keys.root_maxkeys="$maxkeys" kernel.keys.root_maxbytes="$maxbytes"
fi
rm -rf "$STATE"
leftover=$(ls -d /sys/fs/cgroup/*/swerun-node* 2>/dev/null)
if [[ -n "$leftover" ]]; then log "cgroups still in use: $leftover"; fi
log "down: $STATE removed"
