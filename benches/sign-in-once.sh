#!/usr/bin/env bash
# Signing in once, measured with farm-bench (docs/benchmarks.md, "Signing in once"):
#   1. `saffron demo --workers 1` on a copy of the example whose sign-in StepSet is tagged
#      @session, against the same copy untagged (A B A B ..., the ratio A/B pair by pair);
#   2. the Playwright peer with --storage-state (the first sign-in's state reused by every later
#      scenario) against the same peer signing in each time, each against a fresh demo app.
# Usage: npm ci --prefix benches/peers && cargo build --release -p saffron-cli && benches/sign-in-once.sh
# (SAFFRON_BIN=PATH for another build, RUNS=N for more than 5 pairs).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
saffron="${SAFFRON_BIN:-$repo/target/release/saffron}"
runs="${RUNS:-5}"
[ -x "$saffron" ] || { echo "$saffron is missing: cargo build --release -p saffron-cli" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for copy in marked unmarked; do
  mkdir -p "$work/$copy/.saffron"
  cp -r "$repo/features" "$repo/contracts" "$repo/saffron.toml" "$work/$copy/"
  cp -r "$repo/.saffron/cache" "$repo/.saffron/handlers" "$work/$copy/.saffron/"
done
sed -i 's/^  StepSet: signed in as the demo user$/  @session\n  StepSet: signed in as the demo user/' \
  "$work/marked/features/shared.steps.saffron"
grep -q '@session' "$work/marked/features/shared.steps.saffron"

# The peer against a fresh demo app (the scenarios change its data): `saffron demo --serve`
# prints its URL first, then serves until it is stopped.
cat >"$work/peer.sh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
url="\$1"; shift
rm -f "\$url"
"$saffron" demo --serve >"\$url" 2>/dev/null &
server=\$!
trap 'kill \$server' EXIT
until [ -s "\$url" ]; do sleep 0.05; done
DEMO_PASSWORD=saffron-demo node "$repo/benches/peers/replay-playwright.mjs" "\$(head -n1 "\$url")" "\$@" >/dev/null
EOF
chmod +x "$work/peer.sh"

echo "== saffron demo --workers 1: sign-in StepSet tagged @session (A) against untagged (B)"
farm-bench -n "$runs" --timeout 1200 \
  --vs "sh -c \"cd '$work/unmarked' && exec '$saffron' demo --workers 1\"" \
  -- sh -c "cd '$work/marked' && exec '$saffron' demo --workers 1"

echo "== the Playwright peer: --storage-state (A) against signing in each time (B)"
farm-bench -n "$runs" --timeout 1200 \
  --vs "$work/peer.sh $work/b.url" \
  -- "$work/peer.sh" "$work/a.url" --storage-state
