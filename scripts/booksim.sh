#!/usr/bin/env bash
# Builds BookSim2, the reference network simulator `weft bench booksim` runs beside `weft netsim`,
# into target/booksim2 (or $1) and prints the binary's path. BOOKSIM_REPO names another clone
# source (a mirror or a local copy of the repository) for machines without access to GitHub.
#
# One change to BookSim2's source: its k-ary n-cube wires every channel with a fixed latency (2
# cycles on a torus); here that latency is read from a `channel_latency` option instead, so that a
# BookSim hop can be as long as a hop over weft's reliable links and cables. Everything else is
# BookSim2 as published (commit pinned below).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-target/booksim2}"
commit=28f43299f1706a3160ffac721ca461d74eb6e618

need=()
for tool in flex bison g++ make git; do command -v "$tool" >/dev/null || need+=("$tool"); done
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ ! -d "$dir/.git" ]; then
  git clone -q "${BOOKSIM_REPO:-https://github.com/booksim/booksim2.git}" "$dir"
fi
git -C "$dir" checkout -q -f "$commit"
src="$dir/src"
sed -i 's/int latency = _mesh ? 1 : 2 ;/int latency = config.GetInt("channel_latency");/' "$src/networks/kncube.cpp"
grep -q '"channel_latency"' "$src/booksim_config.cpp" ||
  sed -i 's/  _int_map\["use_noc_latency"\] = 1;/  _int_map["use_noc_latency"] = 1;\n  _int_map["channel_latency"] = 2;/' "$src/booksim_config.cpp"
grep -q 'GetInt("channel_latency")' "$src/networks/kncube.cpp" || { echo "booksim.sh: the channel-latency change did not apply" >&2; exit 1; }
make -s -C "$src" -j"$(nproc)" >/dev/null
echo "$(cd "$src" && pwd)/booksim"
