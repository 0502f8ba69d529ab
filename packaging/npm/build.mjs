#!/usr/bin/env node
// Stages the npm packages of `saffron` and packs them into tarballs:
//
//   node packaging/npm/build.mjs --out DIR --binary linux-x64=PATH [--binary darwin-arm64=PATH ...]
//
// One package per platform carries that platform's binary (`@saffron-bdd/cli-<platform>`, with
// `os` and `cpu` so npm installs only the one that fits), and `@saffron-bdd/saffron` lists them
// all as optional dependencies at the same version and runs the one npm installed. The version
// is the workspace's (`[workspace.package] version` in Cargo.toml). A release publishes every
// platform's package before the main one; a local build packs the platforms it is given.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repository = path.resolve(here, "../..");

// The platforms a release ships, as npm names them, with the Rust target that builds each.
export const PLATFORMS = {
  "linux-x64": { os: "linux", cpu: "x64", target: "x86_64-unknown-linux-gnu", exe: "saffron" },
  "linux-arm64": { os: "linux", cpu: "arm64", target: "aarch64-unknown-linux-gnu", exe: "saffron" },
  "darwin-x64": { os: "darwin", cpu: "x64", target: "x86_64-apple-darwin", exe: "saffron" },
  "darwin-arm64": { os: "darwin", cpu: "arm64", target: "aarch64-apple-darwin", exe: "saffron" },
  "win32-x64": { os: "win32", cpu: "x64", target: "x86_64-pc-windows-msvc", exe: "saffron.exe" },
};

function usage(message) {
  process.stderr.write(
    `error: ${message}\n  hint: node packaging/npm/build.mjs --out DIR --binary linux-x64=PATH [--binary PLATFORM=PATH ...]\n` +
      `        platforms: ${Object.keys(PLATFORMS).join(", ")}\n`,
  );
  process.exit(2);
}

function parseArguments(argv) {
  const options = { out: null, binaries: new Map() };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) usage(`${flag} needs a value`);
    i += 1;
    if (flag === "--out") {
      options.out = path.resolve(value);
    } else if (flag === "--binary") {
      const cut = value.indexOf("=");
      const platform = value.slice(0, cut);
      if (cut < 0 || !PLATFORMS[platform]) usage(`--binary takes PLATFORM=PATH, not \`${value}\``);
      options.binaries.set(platform, path.resolve(value.slice(cut + 1)));
    } else {
      usage(`unknown argument \`${flag}\``);
    }
  }
  if (!options.out) usage("--out is required");
  if (options.binaries.size === 0) usage("at least one --binary is required");
  return options;
}

function workspaceVersion() {
  const manifest = readFileSync(path.join(repository, "Cargo.toml"), "utf8");
  const section = manifest.split(/^\[workspace\.package\]\s*$/m)[1] ?? "";
  const version = /^version\s*=\s*"([^"]+)"/m.exec(section.split(/^\[/m)[0]);
  if (!version) usage("Cargo.toml has no [workspace.package] version");
  return version[1];
}

function writeJson(file, value) {
  // Written whole and renamed into place, as every file Saffron writes.
  const temporary = `${file}.tmp-${process.pid}`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(temporary, file);
}

function pack(directory, out) {
  const printed = execFileSync("npm", ["pack", "--json", "--pack-destination", out], {
    cwd: directory,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return path.join(out, JSON.parse(printed)[0].filename);
}

function main() {
  const options = parseArguments(process.argv.slice(2));
  const version = workspaceVersion();
  const license = "LicenseRef-Saffron-Free-Use-1.0";
  mkdirSync(options.out, { recursive: true });
  const stage = mkdtempSync(path.join(tmpdir(), "saffron-npm-"));
  const tarballs = [];
  try {
    for (const [platform, binary] of options.binaries) {
      const { os, cpu, exe } = PLATFORMS[platform];
      const directory = path.join(stage, `cli-${platform}`);
      mkdirSync(directory);
      copyFileSync(binary, path.join(directory, exe));
      chmodSync(path.join(directory, exe), 0o755);
      writeJson(path.join(directory, "package.json"), {
        name: `@saffron-bdd/cli-${platform}`,
        version,
        description: `The saffron binary for ${os} ${cpu}; installed through @saffron-bdd/saffron`,
        license,
        os: [os],
        cpu: [cpu],
        ...(os === "linux" ? { libc: ["glibc"] } : {}),
        files: [exe],
        preferUnplugged: true,
      });
      tarballs.push(pack(directory, options.out));
    }
    const main = path.join(stage, "saffron");
    cpSync(path.join(here, "saffron"), main, { recursive: true });
    const manifest = JSON.parse(readFileSync(path.join(main, "package.json"), "utf8"));
    manifest.version = version;
    manifest.optionalDependencies = Object.fromEntries(
      Object.keys(PLATFORMS).map((platform) => [`@saffron-bdd/cli-${platform}`, version]),
    );
    writeJson(path.join(main, "package.json"), manifest);
    tarballs.push(pack(main, options.out));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  for (const tarball of tarballs) process.stdout.write(`${tarball}\n`);
}

// Run as a program; imported (packaging/check-plan.mjs reads PLATFORMS), it does nothing.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
