#!/usr/bin/env bash
# Makes a cluster CA and one CA-signed certificate per node with the openssl CLI, for
# security.tls = true (docs/security.md).
#   scripts/make-certs.sh DIR [NODE...]     (default nodes: chief ps-0 worker-0 worker-1)
# Writes DIR/ca.pem (the cluster's trust anchor, give it to every node as openssl.cafile),
# DIR/ca.key (keep it off the nodes), and DIR/NODE.pem + DIR/NODE.key per node. Existing files
# are kept, so nodes can be added later with the same CA.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: scripts/make-certs.sh DIR [NODE...]" >&2; exit 2; }
dir=$1
shift
nodes=("$@")
[[ ${#nodes[@]} -gt 0 ]] || nodes=(chief ps-0 worker-0 worker-1)
command -v openssl > /dev/null || { echo "make-certs: the openssl command is missing (apt-get install openssl)" >&2; exit 1; }
mkdir -p "$dir"
umask 077
if [[ ! -f "$dir/ca.pem" ]]; then
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 825 -subj "/CN=actorps cluster CA" \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" 2> "$dir/openssl.log"
fi
for node in "${nodes[@]}"; do
  [[ "$node" =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "make-certs: bad node name '$node'" >&2; exit 2; }
  [[ -f "$dir/$node.pem" ]] && continue
  openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=$node" \
    -keyout "$dir/$node.key" -out "$dir/$node.csr" 2>> "$dir/openssl.log"
  openssl x509 -req -sha256 -days 825 -in "$dir/$node.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -out "$dir/$node.pem" 2>> "$dir/openssl.log"
  rm -f "$dir/$node.csr"
done
chmod 644 "$dir"/*.pem
echo "make-certs: CA $dir/ca.pem; certificates for ${nodes[*]}"
