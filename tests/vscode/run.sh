#!/usr/bin/env bash
# The VS Code end-to-end test (e2e.test.mjs): code-server with the built .vsix and the real
# `saffron lsp`, driven in headless Chromium. Run tests/vscode/install.sh and
# `npm run package` (editors/vscode) first.
#
#   SAFFRON_BIN=target/debug/saffron tests/vscode/run.sh
#
# Environment: see the top of e2e.test.mjs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
if [ ! -d node_modules/code-server ]; then
  echo "tests/vscode: run tests/vscode/install.sh first" >&2
  exit 1
fi
exec node --test --test-reporter=spec e2e.test.mjs
