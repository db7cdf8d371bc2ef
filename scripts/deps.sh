#!/usr/bin/env bash
# Installs the Debian packages weir builds and tests with; skips what is already there.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  doctest-dev libexpected-dev libcli11-dev libfmt-dev libbenchmark-dev nlohmann-json3-dev
  libboost-dev libnuma-dev liblua5.4-dev libhdf5-dev libfftw3-dev liblz4-dev libzstd-dev zlib1g-dev libopenblas-dev
  libzmq3-dev tmux socat clang-14 libclang-rt-14-dev libtorch-dev python3-torch libhnswlib-dev
  hdf5-tools python3-h5py python3-numpy python3-pytest python3-matplotlib python3-silx python3-hdf5plugin hdf5-filter-plugin bitshuffle systemd
  jupyter-nbconvert python3-nbconvert python3-ipykernel
  python3 procps util-linux iproute2 xfsprogs
  prometheus chromium chromium-driver python3-selenium python3-websocket
)
# Kafka in the ESS streaming-data-types schemas (kafka/): librdkafka and flatc to build; the Python
# client, Python FlatBuffers and kcat for the interop tests.
packages+=(librdkafka-dev flatbuffers-compiler libflatbuffers-dev python3-confluent-kafka python3-flatbuffers kcat)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
