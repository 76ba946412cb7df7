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

printf '%8s %12s %14s %14s %12s %12s %7s\n' events "output MB" "rust ns/iter" "node ns/iter" "rust MB/s" "node MB/s" ratio
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
  rust_ns=$(field ns_per_iter "$rust"); node_ns=$(field ns_per_iter "$node")
  printf '%8s %12.1f %14s %14s %12s %12s %6.1fx\n' "$n" \
    "$(awk "BEGIN { print $(field bytes "$rust") / 1e6 }")" "$rust_ns" "$node_ns" \
    "$(field mb_per_s "$rust")" "$(field mb_per_s "$node")" "$(awk "BEGIN { print $node_ns / $rust_ns }")"
done
echo "outputs byte-identical for every size"
