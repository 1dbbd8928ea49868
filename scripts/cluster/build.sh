#!/usr/bin/env bash
# Builds the cluster's Go binaries once, cached by version: kube-apiserver, kube-controller-manager,
# kube-scheduler and kubelet from k8s.io/kubernetes, and etcd from go.etcd.io, all through the Go module proxy.
# Usage: build.sh CACHE_DIR   (binaries land in CACHE_DIR/bin; a finished build leaves CACHE_DIR/bin/.complete)
set -euo pipefail

K8S_VERSION="${SWERUN_K8S_VERSION:-v1.34.4}"
ETCD_VERSION="${SWERUN_ETCD_VERSION:-v3.5.35}"
CACHE="${1:?usage: build.sh CACHE_DIR}"
BIN="$CACHE/bin"
# Go: $GO, else /usr/local/go's, else the one on PATH; Kubernetes 1.34 needs go >= 1.24.
if [[ -z "${GO:-}" ]]; then
  if [[ -x /usr/local/go/bin/go ]]; then GO=/usr/local/go/bin/go; else GO="$(command -v go || true)"; fi
fi
[[ -n "$GO" ]] || { echo "build.sh: no Go toolchain (install Go >= 1.24, or set GO)" >&2; exit 1; }
go_minor="$("$GO" env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')"
if [[ -z "$go_minor" || "$go_minor" -lt 24 ]]; then
  echo "build.sh: $GO is $("$GO" env GOVERSION); Kubernetes $K8S_VERSION needs go >= 1.24 (set GO)" >&2
  exit 1
fi

mkdir -p "$BIN" "$CACHE/src/k8s" "$CACHE/src/etcd" "$CACHE/src/pause"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local

# The pod sandbox's image: a static program that waits for SIGTERM, as an OCI archive `ctr import` reads.
if [[ ! -f "$CACHE/pause.tar" ]]; then
  cat >"$CACHE/src/pause/main.go" <<'GO'
// pause: the process of a pod sandbox; it waits for SIGINT or SIGTERM.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	<-c
}
GO
  (cd "$CACHE/src/pause" && "$GO" build -trimpath -ldflags "-s -w" -o "$BIN/pause" main.go)
  oci="$(mktemp -d)"
  mkdir -p "$oci/rootfs" "$oci/blobs/sha256"
  cp "$BIN/pause" "$oci/rootfs/pause"
  tar --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$oci/rootfs" -cf "$oci/layer.tar" pause
  blob() { local digest; digest=$(sha256sum "$1" | cut -d' ' -f1); mv "$1" "$oci/blobs/sha256/$digest"; echo "$digest"; }
  size() { stat -c %s "$oci/blobs/sha256/$1"; }
  layer=$(blob "$oci/layer.tar")
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$layer" >"$oci/config.json"
  config=$(blob "$oci/config.json")
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "$config" "$(size "$config")" "$layer" "$(size "$layer")" >"$oci/manifest.json"
  manifest=$(blob "$oci/manifest.json")
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"docker.io/swerun-k8s/pause:1","org.opencontainers.image.ref.name":"1"}}]}' \
    "$manifest" "$(size "$manifest")" >"$oci/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$oci/oci-layout"
  tar -C "$oci" -cf "$CACHE/pause.tar.tmp" oci-layout index.json blobs
  mv "$CACHE/pause.tar.tmp" "$CACHE/pause.tar"
  rm -rf "$oci"
fi
if [[ -f "$BIN/.complete" ]]; then
  exit 0
fi
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
