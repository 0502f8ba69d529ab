#!/usr/bin/env node
// Runs the `saffron` binary that npm installed from this platform's optional dependency
// (the pattern of @biomejs/biome and esbuild): the binary is never downloaded at install time.
"use strict";

const { spawnSync } = require("node:child_process");
const path = require("node:path");

// process.platform and process.arch -> the package that carries the binary.
const PLATFORMS = {
  "linux x64": "@saffron-bdd/cli-linux-x64",
  "linux arm64": "@saffron-bdd/cli-linux-arm64",
  "darwin x64": "@saffron-bdd/cli-darwin-x64",
  "darwin arm64": "@saffron-bdd/cli-darwin-arm64",
  "win32 x64": "@saffron-bdd/cli-win32-x64",
};

function binaryPath() {
  // An escape hatch for a platform without a package, or a binary built from source.
  if (process.env.SAFFRON_BINARY) {
    return process.env.SAFFRON_BINARY;
  }
  const key = `${process.platform} ${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    fail(
      `saffron has no prebuilt binary for ${key}.\n` +
        "  hint: build it with `cargo install --locked --path crates/saffron-cli` from a clone of the\n" +
        "        repository, and point SAFFRON_BINARY at it",
    );
  }
  const exe = process.platform === "win32" ? "saffron.exe" : "saffron";
  try {
    return require.resolve(`${pkg}/${exe}`);
  } catch {
    fail(
      `saffron's binary package ${pkg} is not installed.\n` +
        "  hint: it is an optional dependency of @saffron-bdd/saffron; an install with\n" +
        "        --omit=optional or --no-optional leaves it out. Install again without that flag,\n" +
        `        or add ${pkg} to your devDependencies`,
    );
  }
}

function fail(message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(2);
}

const result = spawnSync(binaryPath(), process.argv.slice(2), { stdio: "inherit", windowsHide: true });
if (result.error) {
  fail(`could not start ${path.basename(String(result.error.path || "saffron"))}: ${result.error.message}`);
}
if (result.signal) {
  // Die of the same signal, so a shell or CI sees what the binary saw.
  process.kill(process.pid, result.signal);
}
process.exit(result.status ?? 1);
