#!/usr/bin/env bash
# Token counting throughput of the Rust tokenizers (benches/tokens.rs) and js-tiktoken, on the
# same texts in the same run, printed side by side in MB/s (10^6 bytes per second).
#   benches/tokens-vs-js.sh [criterion args...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT

cd "$root"
THREADKEEPER_TOKENS_CORPUS="$corpus" cargo bench --bench tokens -- count_10k_events \
  --warm-up-time 1 --measurement-time 3 "$@" 2>&1 | tee "$corpus/rust.log" >&2

echo
printf '%-28s %-5s %10s\n' "tokenizer" "text" "MB/s"
# Criterion prints "count_10k_events/NAME/TEXT" then "thrpt: [low MID UNIT high]"; MID in MB/s.
awk '
  /^count_10k_events\// { n = split($1, p, "/"); name = p[2] (n == 4 ? "/" p[3] : ""); text = p[n] }
  # The first thrpt line after a name is the measurement; a later one is the change since the last run.
  /thrpt:/ && name != "" {
    for (i = 1; i <= NF; i++) if ($i ~ /^\[/) { v = $(i + 2); u = $(i + 3); break }
    f = (u ~ /^GiB/) ? 1073.741824 : (u ~ /^MiB/) ? 1.048576 : (u ~ /^KiB/) ? 0.001024 : 1
    printf "%-28s %-5s %10.1f\n", name, text, v * f
    name = ""
  }' "$corpus/rust.log"

cd "$root/benches/js-tiktoken"
[ -d node_modules ] || npm ci --no-audit --no-fund >&2
node bench.mjs "$corpus" | awk -F'\t' '{ split($3, m, " "); printf "%-28s %-5s %10.1f   (%s)\n", $1, $2, m[1], $4 }'
