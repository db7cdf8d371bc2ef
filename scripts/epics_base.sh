#!/usr/bin/env bash
# EPICS base for weir's EPICS parts, printed as a path on stdout (progress on stderr):
#   - a site's own base, when $EPICS_BASE names one (as areaDetector and every EPICS module take it);
#   - else Debian's own epics-base source (7.0.3.1), built once into a cache this script manages
#     ($WEIR_EPICS_CACHE, default ~/.cache/weir/epics) and reused from then on.
# Debian 12 ships only the Channel Access client library (libca); its source builds the CA server
# (RSRV), the IOC database, softIoc, caget and camonitor; with --pva also pvAccess (QSRV, softIocPVA,
# pvget). The source comes through a deb-src entry for Debian's own archive, added when missing.
#   scripts/epics_base.sh [--pva]
set -euo pipefail

pva=0
for arg in "$@"; do
  case $arg in
    --pva) pva=1 ;;
    *) echo "epics_base: unknown option '$arg' (--pva)" >&2; exit 2 ;;
  esac
done

has_ca_server() { [[ -f $1/include/cadef.h && -f $1/include/dbAccess.h && -x $1/bin/linux-x86_64/softIoc ]]; }

if [[ -n ${EPICS_BASE:-} ]]; then
  if ! has_ca_server "$EPICS_BASE"; then
    echo "epics_base: EPICS_BASE=$EPICS_BASE has no IOC database and softIoc (include/dbAccess.h, bin/linux-x86_64/softIoc)" >&2
    exit 1
  fi
  echo "$EPICS_BASE"
  exit 0
fi

version=7.0.3.1
cache=${WEIR_EPICS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/weir/epics}
base=$cache/epics-base-$version
stamp_ca=$base/.weir-built-ca
stamp_pva=$base/.weir-built-pva
if [[ -f $stamp_ca && ( $pva == 0 || -f $stamp_pva ) ]]; then
  echo "$base"
  exit 0
fi

sudo=()
[[ $(id -u) == 0 ]] || sudo=(sudo)
mkdir -p "$cache"
if [[ ! -d $base ]]; then
  if ! apt-get source --print-uris epics-base >/dev/null 2>&1 ||
     [[ -z $(apt-get source --print-uris epics-base 2>/dev/null | grep -F "epics-base_$version") ]]; then
    # The same archive the machine's binary packages come from: its first `deb` source's URI.
    uri=$(awk '/^URIs:/ && !done { print $2; done = 1 }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    [[ -n $uri ]] || uri=$(awk '$1 == "deb" && !done { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; done = 1; break } }' \
                             /etc/apt/sources.list 2>/dev/null || true)
    [[ -n $uri ]] || { echo "epics_base: no Debian archive among apt's sources to add a deb-src entry for" >&2; exit 1; }
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    echo "epics_base: adding a deb-src entry for $uri $suite (/etc/apt/sources.list.d/weir-deb-src.sources)" >&2
    printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$uri" "$suite" | "${sudo[@]}" tee /etc/apt/sources.list.d/weir-deb-src.sources >/dev/null
    "${sudo[@]}" apt-get update -q >&2
  fi
  # What the build needs: a compiler and make (the build set has them), perl, readline for the IOC
  # shell, dpkg-dev to unpack the source with Debian's patches.
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    dpkg-dev perl libreadline-dev >&2
  (cd "$cache" && apt-get source -q "epics-base=${version}-4" >&2) ||
    (cd "$cache" && apt-get source -q epics-base >&2)
  [[ -d $base ]] || { echo "epics_base: apt-get source gave no $base" >&2; exit 1; }
fi

jobs=$(nproc)
started=$SECONDS
if [[ ! -f $stamp_ca ]]; then
  echo "epics_base: building EPICS base $version (Channel Access, the IOC database, softIoc) in $base" >&2
  make -C "$base" -j "$jobs" configure.install src.install >&2
  make -C "$base/modules" -j "$jobs" database.install >&2
  has_ca_server "$base" || { echo "epics_base: the build left no softIoc in $base" >&2; exit 1; }
  touch "$stamp_ca"
  echo "epics_base: Channel Access built in $((SECONDS - started)) s" >&2
fi
if [[ $pva == 1 && ! -f $stamp_pva ]]; then
  echo "epics_base: building pvAccess (QSRV, softIocPVA, pvget)" >&2
  make -C "$base/modules" -j "$jobs" pva2pva.install >&2
  touch "$stamp_pva"
  echo "epics_base: pvAccess built, $((SECONDS - started)) s in all" >&2
fi
echo "$base"
