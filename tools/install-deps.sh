#!/usr/bin/env bash
# install-deps.sh: installs every Debian 12 package FX Workbench needs to build, test and run.
set -euo pipefail

packages=(
  # build
  meson ninja-build pkg-config gcc g++ clang libclang-rt-14-dev
  # engine and backends
  libsqlite3-dev libjson-c-dev libzip-dev libopenblas-dev
  # capture (embedded CPython 3.11 with Debian's torch)
  python3-dev python3-torch python3-tabulate
  # CLI, app and viewers
  libglib2.0-dev libsoup-3.0-dev libgtk-4-dev libadwaita-1-dev libgtksourceview-5-dev libgraphviz-dev
  # data validation, translations, tests
  desktop-file-utils appstream gettext xvfb xauth zip unzip
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
