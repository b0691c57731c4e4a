#!/usr/bin/env bash
# Installs Debian's python3-torch when /usr/bin/python3 cannot import torch (bench scripts only;
# never scripts/test.sh). Usage: bench/install_torch.sh CALLER_NAME
set -euo pipefail
/usr/bin/python3 -c "import torch" 2> /dev/null && exit 0
echo "== installing python3-torch (Debian) for the PyTorch baselines"
sudo_cmd=""; [[ $(id -u) -eq 0 ]] || sudo_cmd=sudo
log=$(mktemp)
$sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-torch > "$log" 2>&1 \
  || { echo "${1:-bench}: installing python3-torch failed, see the log:" >&2; tail -5 "$log" >&2; rm -f "$log"; exit 1; }
rm -f "$log"
