// Bundles the extension with esbuild into dist/extension.js (one file, so the .vsix needs no
// node_modules), or, with --tests, the unit tests into out/test/.
//
//   node scripts/build.mjs               development build, with a source map
//   node scripts/build.mjs --production  minified, what `vsce package` ships
//   node scripts/build.mjs --tests       out/test/*.test.js for `node --test`

import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');

if (tests) {
  rmSync(join(root, 'out/test'), { recursive: true, force: true });
  const entryPoints = readdirSync(join(root, 'test'))
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => join(root, 'test', name));
  await esbuild.build({
    absWorkingDir: root,
    entryPoints,
    outdir: join(root, 'out/test'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    sourcemap: 'inline',
    logLevel: 'warning',
  });
} else {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [join(root, 'src/extension.ts')],
    outfile: join(root, 'dist/extension.js'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    // VS Code 1.91 runs extensions on Node 20.
    target: 'node20',
    external: ['vscode'],
    minify: production,
    sourcemap: production ? false : 'linked',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  writeNotices(Object.keys(result.metafile.inputs));
}

// The licenses of the npm packages bundled into dist/extension.js, shipped beside it.
function writeNotices(inputs) {
  const packages = new Set();
  for (const input of inputs) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match !== null) {
      packages.add(match[1]);
    }
  }
  const sections = [];
  for (const name of [...packages].sort()) {
    const directory = join(root, 'node_modules', name);
    const { version, license } = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8'));
    const file = readdirSync(directory).find((entry) => /^licen[cs]e(\.md|\.txt)?$/i.test(entry));
    if (file === undefined || !existsSync(join(directory, file))) {
      throw new Error(`${name} is bundled but ships no license file`);
    }
    const text = readFileSync(join(directory, file), 'utf8').trim();
    sections.push(`${name}@${version} (${license})\n\n${text}\n`);
  }
  writeFileSync(
    join(root, 'dist/THIRD-PARTY-NOTICES.txt'),
    `Packages bundled into extension.js\n\n${sections.join('\n' + '-'.repeat(78) + '\n\n')}`,
  );
}
