#!/usr/bin/env bash
# Rust XmlRenderer vs. the seed's reference serializer on Node, on the same generated threads.
#
#   bench/compare-xml.sh [SIZES...]      (default: 1000 10000 100000)
#
# For each size: generate the thread once (examples/gen_thread.rs), render it repeatedly in
# process with both implementations (examples/bench_xml.rs, bench/reference/bench-xml.mjs),
# check that the two documents are byte-identical, and print both throughputs and the ratio.
set -euo pipefail

cd "$(dirname "$0")/.."
(( $# > 0 )) || set -- 1000 10000 100000

cargo build --quiet --release --example gen_thread --example bench_xml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" <<<"$2"; }

printf '%8s %10s | %-30s | %-30s | %s\n' "" "" "median of the renders" "fastest render" "Rust / Node"
printf '%8s %10s | %9s %9s %10s | %9s %9s %10s | %6s %7s\n' events "output MB" \
  "Rust ms" "Node ms" "Rust MB/s" "Rust ms" "Node ms" "Rust MB/s" median fastest
for n in "$@"; do
  # About 300 MB of output per implementation, at least 5 renders.
  iterations=$(( 400000 / n )); (( iterations < 5 )) && iterations=5
  target/release/examples/gen_thread "$n" >"$work/thread.json"
  rust=$(target/release/examples/bench_xml "$work/thread.json" "$iterations" --out "$work/rust.xml")
  node=$(node bench/reference/bench-xml.mjs "$work/thread.json" "$iterations" --out "$work/node.xml")
  if ! cmp -s "$work/rust.xml" "$work/node.xml"; then
    echo "outputs differ at $n events:" >&2
    cmp "$work/rust.xml" "$work/node.xml" >&2 || true
    exit 1
  fi
  awk -v n="$n" -v bytes="$(field bytes "$rust")" \
    -v rm="$(field ns_per_iter "$rust")" -v nm="$(field ns_per_iter "$node")" \
    -v rf="$(field min_ns "$rust")" -v nf="$(field min_ns "$node")" 'BEGIN {
      printf "%8d %10.1f | %9.2f %9.2f %10.0f | %9.2f %9.2f %10.0f | %5.1fx %6.1fx\n",
        n, bytes / 1e6, rm / 1e6, nm / 1e6, bytes / rm * 1e3, rf / 1e6, nf / 1e6, bytes / rf * 1e3, nm / rm, nf / rf
    }'
done
echo "outputs byte-identical for every size"
