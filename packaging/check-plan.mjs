#!/usr/bin/env node
// Checks cargo-dist's plan (`dist plan --output-format=json` on stdin) against what the other
// installs expect: every target a release builds has an archive holding the `saffron` binary and
// a checksum beside it, and the npm packages (packaging/npm/build.mjs) are built from exactly
// those targets. Prints one line per archive; exits 1 naming what does not hold.
import { readFileSync } from "node:fs";
import { PLATFORMS } from "./npm/build.mjs";

const plan = JSON.parse(readFileSync(0, "utf8"));
const problems = [];
const archives = Object.values(plan.artifacts ?? {}).filter((artifact) => artifact.kind === "executable-zip");
const byTarget = new Map();
for (const archive of archives) {
  for (const target of archive.target_triples ?? []) byTarget.set(target, archive);
}
for (const [platform, { target, exe }] of Object.entries(PLATFORMS)) {
  const archive = byTarget.get(target);
  if (!archive) {
    problems.push(`npm platform ${platform} needs the ${target} binary, and the plan builds no archive for it`);
    continue;
  }
  const binary = (archive.assets ?? []).find((asset) => asset.kind === "executable");
  const binaryFile = binary?.path?.split("/").pop();
  if (binaryFile !== exe) {
    problems.push(`${archive.name} holds ${binary ? `\`${binaryFile}\`` : "no executable"}, not \`${exe}\``);
  }
  if (!archive.checksum || !plan.artifacts[archive.checksum]) {
    problems.push(`${archive.name} has no checksum beside it`);
  }
  process.stdout.write(`${archive.name}: ${exe}, ${archive.checksum ?? "no checksum"} (npm ${platform})\n`);
}
const npmTargets = new Set(Object.values(PLATFORMS).map(({ target }) => target));
for (const target of byTarget.keys()) {
  if (!npmTargets.has(target)) problems.push(`the plan builds ${target}, which no npm platform package carries`);
}
if (!plan.artifacts?.["sha256.sum"]) problems.push("the plan has no sha256.sum of the archives");
for (const problem of problems) process.stderr.write(`error: ${problem}\n`);
process.exit(problems.length === 0 ? 0 : 1);
