#!/usr/bin/env bash
# Installs the Debian packages weir needs; skips what is already there.
#   scripts/deps.sh build        what configuring and building the `weir` command needs (scripts/build.sh,
#                                scripts/demo.sh): compilers, CMake, Ninja and the -dev packages weir links
#   scripts/deps.sh test         the rest the test suite uses (scripts/test.sh): Chromium, Prometheus,
#                                Jupyter, torch for the embed plugin, clang for fuzzing, h5py, ...
#   scripts/deps.sh build test   both (no argument: both)
#   scripts/deps.sh --list SET…  prints the packages instead of installing them
set -euo pipefail
build=(
  build-essential cmake ninja-build pkg-config python3
  ccache  # scripts/build.sh and test.sh compile through it: a second build of the same code is a cache hit
  doctest-dev libexpected-dev libcli11-dev libfmt-dev nlohmann-json3-dev libboost-dev libnuma-dev
  liblua5.4-dev libhdf5-dev libfftw3-dev liblz4-dev libzstd-dev zlib1g-dev libopenblas-dev libzmq3-dev
  libhnswlib-dev
  libsystemd-dev  # `weir run` speaks systemd's notify protocol (READY, STATUS, WATCHDOG); without it the protocol is off
  libssl-dev  # SHA-256 of the recorders' checksum manifests (libcrypto's EVP)
  hdf5-tools  # h5dump: configuring finds it (the codec and recorder tests), the demo points to it
  # Kafka in the ESS streaming-data-types schemas (kafka/): librdkafka and flatc to build.
  librdkafka-dev flatbuffers-compiler libflatbuffers-dev
)
# The web page's plotting library (uPlot) is fetched with npm when weir is built: Debian's npm, unless
# an npm is already on the PATH.
command -v npm >/dev/null || build+=(npm)
test=(
  libbenchmark-dev tmux socat clang-14 libclang-rt-14-dev libtorch-dev python3-torch
  python3-h5py python3-numpy python3-pandas python3-pytest python3-matplotlib python3-silx python3-hdf5plugin hdf5-filter-plugin bitshuffle systemd
  jupyter-nbconvert python3-nbconvert python3-ipykernel
  procps util-linux iproute2 xfsprogs e2fsprogs
  inotify-tools  # inotifywait: no partial file ever appears under a recording's final name
  prometheus chromium chromium-driver python3-selenium python3-websocket
  python3-confluent-kafka python3-flatbuffers kcat  # the Kafka interop tests
  libtango-dev python3-tango tango-test  # weir-tango and its tests (Tango 9.3: libtango, PyTango, TangoTest)
  mariadb-server tango-db  # a private Tango database (TANGO_HOST) for the tests, started by tests/tango/tango_database.py
  python3-pyepics  # the EPICS tests: Debian's CA client (npm, for the epics-tca client, is in the build set)
)
list=0
if [[ ${1:-} == --list ]]; then
  list=1
  shift
fi
sets=("$@")
((${#sets[@]})) || sets=(build test)
packages=()
for set in "${sets[@]}"; do
  case $set in
    build) packages+=("${build[@]}") ;;
    test) packages+=("${test[@]}") ;;
    *) echo "deps: unknown set '$set' (build or test)" >&2; exit 2 ;;
  esac
done
if ((list)); then
  echo "${packages[*]}"
  exit 0
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  # tango-db would set up a system-wide database through dbconfig-common: the tests make their own.
  if [[ " ${missing[*]} " == *" tango-db "* ]]; then
    echo "tango-db tango-db/dbconfig-install boolean false" | "${sudo_cmd[@]}" debconf-set-selections
  fi
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
