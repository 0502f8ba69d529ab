#!/usr/bin/env bash
# Replaying in Firefox against replaying in Chromium, measured with farm-bench
# (docs/benchmarks.md, "Firefox against Chromium"): `saffron demo --workers 1`, the example's
# 18 scenarios from the same Chromium recordings, `--browser firefox` (A) against
# `--browser chromium` (B), A B A B ..., the ratio A/B pair by pair. Whole processes: each
# launches its browser and a fresh demo app.
# Usage: cargo build --release -p saffron-cli && benches/firefox-replay.sh
# (SAFFRON_BIN=PATH for another build, RUNS=N for more than 5 pairs, WORKERS=N).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
saffron="${SAFFRON_BIN:-$repo/target/release/saffron}"
runs="${RUNS:-5}"
workers="${WORKERS:-1}"
[ -x "$saffron" ] || { echo "$saffron is missing: cargo build --release -p saffron-cli" >&2; exit 2; }
command -v firefox-esr >/dev/null || { echo "firefox-esr is missing: apt-get install firefox-esr" >&2; exit 2; }
cd "$repo"

echo "== saffron demo --workers $workers: --browser firefox (A) against --browser chromium (B)"
farm-bench -n "$runs" --timeout 1800 \
  --vs "$saffron demo --browser chromium --workers $workers" \
  -- "$saffron" demo --browser firefox --workers "$workers"
