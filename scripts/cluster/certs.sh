# Certificates and kubeconfigs of the test cluster, made with openssl (sourced by up.sh).
# One CA signs every certificate: the API server's serving cert, the client certs of the admin, the
# controller-manager, the scheduler, each kubelet and the API server's own towards the kubelets, and the
# kubelets' serving certs. The service-account key pair signs service-account tokens.

# sign NAME SUBJECT [SAN] [EXTENDED_KEY_USAGE]: key and cert NAME.{key,crt} in $PKI, signed by the CA.
sign() {
  local name="$1" subject="$2" san="${3:-}" usage="${4:-clientAuth}"
  openssl genrsa -out "$PKI/$name.key" 2048 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subject" -out "$PKI/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    if [[ -n "$san" ]]; then echo "subjectAltName=$san"; fi
  } >"$PKI/$name.ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 30 -sha256 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

# kubeconfig FILE NAME: a kubeconfig for the client cert NAME.
kubeconfig() {
  local file="$1" name="$2"
  cat >"$file" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: swerun
  cluster:
    certificate-authority: $PKI/ca.crt
    server: https://$HOST_IP:$APISERVER_PORT
users:
- name: $name
  user:
    client-certificate: $PKI/$name.crt
    client-key: $PKI/$name.key
contexts:
- name: swerun
  context:
    cluster: swerun
    user: $name
current-context: swerun
KUBECONFIG
}

make_certs() {
  PKI="$STATE/pki"
  mkdir -p "$PKI"
  openssl genrsa -out "$PKI/ca.key" 2048 2>/dev/null
  openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=swerun-test-ca" -days 30 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$PKI/ca.crt" 2>/dev/null
  sign apiserver "/CN=kube-apiserver" \
    "IP:$HOST_IP,IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
    serverAuth
  sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  sign admin "/O=system:masters/CN=swerun-admin"
  sign controller-manager "/CN=system:kube-controller-manager"
  sign scheduler "/CN=system:kube-scheduler"
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  kubeconfig "$KUBECONFIG_PATH" admin
  kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager
  kubeconfig "$STATE/scheduler.kubeconfig" scheduler
  local n
  for ((n = 1; n <= NODES; n++)); do
    sign "node$n" "/O=system:nodes/CN=system:node:swerun-node$n"
    sign "node$n-serving" "/CN=swerun-node$n" "IP:$(node_ip "$n"),DNS:swerun-node$n" serverAuth
    kubeconfig "$STATE/node$n/kubelet.kubeconfig" "node$n"
  done
  chmod 600 "$PKI"/*.key
}
