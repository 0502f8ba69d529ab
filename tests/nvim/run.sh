#!/usr/bin/env bash
# Headless Neovim test of editors/nvim against the real `saffron lsp`.
#
#   tests/nvim/run.sh
#
# Environment:
#   SAFFRON_BIN   the saffron binary (default: target/debug/saffron; a relative path is taken
#                 from the repository root)
#   NVIM          the nvim to run (default: nvim on PATH; Debian 12's 0.7.2 is enough)
#   SAFFRON_NVIM_TEST_TIMEOUT_MS  how long each wait may take (default: 20000)
#   SAFFRON_NVIM_API  force the plugin's LSP code path: config (0.11+), start (0.8+) or
#                 start_client (0.7+); by default the newest the Neovim has
#
# The example project (features/ and .saffron/) is copied to a temporary folder first, so the
# repository is never modified. Prints one line per check and `N passed, M failed` last; exits 1
# when a check failed.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${SAFFRON_BIN:-target/debug/saffron}"
case "$bin" in
  /*) ;;
  *) bin="$repo/$bin" ;;
esac
nvim="${NVIM:-nvim}"

if ! command -v "$nvim" >/dev/null 2>&1; then
  echo "nvim not found (install Debian's package: apt-get install -y neovim, or set NVIM)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/saffron-nvim-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project" "$work/home"
cp -R "$repo/features" "$work/project/"
if [ -d "$repo/.saffron" ]; then
  cp -R "$repo/.saffron" "$work/project/"
  rm -f "$work/project/.saffron/.lock"
fi
if [ -f "$repo/saffron.toml" ]; then
  cp "$repo/saffron.toml" "$work/project/"
fi

# A clean Neovim: no user config, shada, swap files or plugins from this machine; the LSP log
# lands in the temporary folder.
export HOME="$work/home"
export XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share"
export XDG_STATE_HOME="$work/home/.local/state" XDG_CACHE_HOME="$work/home/.cache"
export SAFFRON_REPO="$repo" SAFFRON_PROJECT="$work/project" SAFFRON_BIN="$bin"

# `saffron steps` and `saffron run` work on the project of the current folder.
cd "$work/project"

status=0
# `timeout` is a backstop for a Neovim that hangs; every wait inside has its own deadline.
# Neovim's own messages (stderr) are printed first, so the summary stays the last line.
timeout 300 "$nvim" --headless -i NONE -n -u "$repo/tests/nvim/init.lua" \
  >"$work/stdout" 2>"$work/stderr" || status=$?
if [ -s "$work/stderr" ]; then
  printf '%s\n' "$(tr '\r' '\n' <"$work/stderr")" | sed -e '/^[[:space:]]*$/d' -e 's/^/nvim: /'
fi
cat "$work/stdout"
if [ "$status" -eq 124 ]; then
  echo "nvim did not finish within 300 s"
  echo "0 passed, 1 failed"
elif [ "$status" -ne 0 ] && ! tail -n 1 "$work/stdout" | grep -q ' passed, '; then
  echo "nvim exited with status $status before the checks finished"
  echo "0 passed, 1 failed"
fi
exit "$status"
