#!/usr/bin/env bash
# Builds the cluster's Go binaries once, cached by version: kube-apiserver, kube-controller-manager,
# kube-scheduler and kubelet from k8s.io/kubernetes, and etcd from go.etcd.io, all through the Go module proxy.
# Usage: build.sh CACHE_DIR   (binaries land in CACHE_DIR/bin; a finished build leaves CACHE_DIR/bin/.complete)
set -euo pipefail

K8S_VERSION="${SWERUN_K8S_VERSION:-v1.34.4}"
ETCD_VERSION="${SWERUN_ETCD_VERSION:-v3.5.35}"
CACHE="${1:?usage: build.sh CACHE_DIR}"
GO="${GO:-/usr/local/go/bin/go}"
BIN="$CACHE/bin"

if [[ -f "$BIN/.complete" ]]; then
  exit 0
fi
mkdir -p "$BIN" "$CACHE/src/k8s" "$CACHE/src/etcd"
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
staging="${K8S_VERSION/#v1./v0.}"

# k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with ./staging paths; a dependency's
# replaces are ignored, so the builder module replaces each with its published tag (kubernetes/kubernetes#79384).
modules="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider cluster-bootstrap
code-generator component-base component-helpers controller-manager cri-api cri-client csi-translation-lib
dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator kube-controller-manager kube-proxy
kube-scheduler kubectl kubelet metrics mount-utils pod-security-admission sample-apiserver sample-cli-plugin
sample-controller"
{
  echo "module swerun.local/k8s-build"
  echo
  echo "go 1.24.0"
  echo
  echo "godebug default=go1.24"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "tool ("
  for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
    echo "	k8s.io/kubernetes/cmd/$cmd"
  done
  echo ")"
  echo
  echo "replace ("
  for m in $modules; do
    echo "	k8s.io/$m => k8s.io/$m $staging"
  done
  echo ")"
} >"$CACHE/src/k8s/go.mod"

cat >"$CACHE/src/etcd/go.mod" <<GOMOD
module swerun.local/etcd-build

go 1.24.0

require go.etcd.io/etcd/server/v3 $ETCD_VERSION

tool go.etcd.io/etcd/server/v3
GOMOD

export CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1"
ldflags+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"

start=$(date +%s)
(cd "$CACHE/src/etcd" && "$GO" mod tidy && "$GO" build -trimpath -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3)
echo "etcd $ETCD_VERSION built in $(($(date +%s) - start)) s" >&2
(cd "$CACHE/src/k8s" && "$GO" mod tidy)
echo "k8s modules resolved at $(($(date +%s) - start)) s" >&2
(cd "$CACHE/src/k8s" && "$GO" build -trimpath -ldflags "$ldflags" -o "$BIN/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet)
echo "kubernetes $K8S_VERSION built in $(($(date +%s) - start)) s (total)" >&2
echo "$K8S_VERSION etcd $ETCD_VERSION $(($(date +%s) - start))s" >"$BIN/.complete"
