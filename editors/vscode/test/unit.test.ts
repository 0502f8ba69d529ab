// Unit tests of the parts of the extension that do not need VS Code.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';

import { expandConfiguredPath, findExecutable } from '../src/executable';
import { firstStringArgument, scenarioLensAt } from '../src/lenses';
import { findProjectRoot, relativeToRoot, resolveInsideRoot, splitScenarioArgument } from '../src/project';
import { parseProposal, reviewPrompt } from '../src/proposal';
import { prepareSnippets, SNIPPET_SCOPE } from '../src/snippets';

const temporaryDirectories: string[] = [];

function temporaryDirectory(): string {
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'saffron-vscode-test-')));
  temporaryDirectories.push(directory);
  return directory;
}

after(() => {
  for (const directory of temporaryDirectories) {
    fs.rmSync(directory, { recursive: true, force: true });
  }
});

function writeExecutable(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\nexit 0\n');
  fs.chmodSync(file, 0o755);
}

describe('findExecutable', () => {
  it('finds a bare name on PATH and skips files that are not executable', () => {
    const directory = temporaryDirectory();
    const first = path.join(directory, 'first');
    const second = path.join(directory, 'second');
    fs.mkdirSync(first);
    fs.writeFileSync(path.join(first, 'saffron'), 'not executable');
    fs.chmodSync(path.join(first, 'saffron'), 0o644);
    writeExecutable(path.join(second, 'saffron'));
    const env = { PATH: [first, second].join(':') };
    assert.equal(findExecutable('saffron', { env, platform: 'linux' }), path.join(second, 'saffron'));
    assert.equal(findExecutable('absent-saffron', { env, platform: 'linux' }), undefined);
  });

  it('checks a path as it is, relative paths against the workspace folder', () => {
    const directory = temporaryDirectory();
    writeExecutable(path.join(directory, 'target/debug/saffron'));
    const options = { workspaceFolder: directory, env: { PATH: '' }, platform: 'linux' as const };
    assert.equal(findExecutable('./target/debug/saffron', options), path.join(directory, 'target/debug/saffron'));
    assert.equal(
      findExecutable('${workspaceFolder}/target/debug/saffron', options),
      path.join(directory, 'target/debug/saffron'),
    );
    assert.equal(findExecutable('./target/release/saffron', options), undefined);
  });

  it('expands ~ and ${userHome}, and refuses ${workspaceFolder} without a folder', () => {
    assert.equal(expandConfiguredPath('~/.cargo/bin/saffron'), path.join(os.homedir(), '.cargo/bin/saffron'));
    assert.equal(expandConfiguredPath('${userHome}/bin/saffron'), `${os.homedir()}/bin/saffron`);
    assert.equal(expandConfiguredPath('saffron', { workspaceFolder: '/w' }), 'saffron');
    assert.throws(() => expandConfiguredPath('${workspaceFolder}/saffron'), /no folder is open/);
  });
});

describe('project roots', () => {
  it('finds the nearest folder with saffron.toml or .saffron', () => {
    const directory = temporaryDirectory();
    fs.mkdirSync(path.join(directory, 'shop/.saffron/cache'), { recursive: true });
    fs.mkdirSync(path.join(directory, 'shop/features/cart'), { recursive: true });
    fs.writeFileSync(path.join(directory, 'shop/features/cart/buy.feature'), 'Feature: Buy\n');
    fs.writeFileSync(path.join(directory, 'saffron.toml'), '');
    assert.equal(findProjectRoot(path.join(directory, 'shop/features/cart/buy.feature')), path.join(directory, 'shop'));
    assert.equal(findProjectRoot(path.join(directory, 'shop/features')), path.join(directory, 'shop'));
    assert.equal(findProjectRoot(path.join(directory, 'other.feature')), directory);
    assert.equal(
      findProjectRoot(path.join(directory, 'shop/features/cart'), path.join(directory, 'shop/features')),
      undefined,
    );
  });

  it('resolves project-relative paths and refuses ones that leave the root', () => {
    const root = path.resolve('/project');
    assert.equal(
      resolveInsideRoot(root, '.saffron/proposals/orders/export.json'),
      path.join(root, '.saffron', 'proposals', 'orders', 'export.json'),
    );
    assert.throws(() => resolveInsideRoot(root, '../etc/passwd'), /outside the project root/);
    assert.throws(() => resolveInsideRoot(root, 'features/../../x'), /outside the project root/);
    assert.throws(() => resolveInsideRoot(root, '/etc/passwd'), /not relative/);
    assert.throws(() => resolveInsideRoot(root, 'C:\\x'), /not relative/);
    assert.equal(relativeToRoot(root, path.join(root, 'features', 'shop', 'Cart Checkout.feature')), 'features/shop/Cart Checkout.feature');
  });

  it('splits path:line arguments', () => {
    assert.deepEqual(splitScenarioArgument('features/orders.saffron:8'), { file: 'features/orders.saffron', line: 8 });
    assert.deepEqual(splitScenarioArgument('features/a:b.feature:12'), { file: 'features/a:b.feature', line: 12 });
    assert.equal(splitScenarioArgument('features/orders.saffron'), undefined);
    assert.equal(splitScenarioArgument('features/orders.saffron:0'), undefined);
    assert.equal(splitScenarioArgument(':3'), undefined);
  });
});

const proposal = {
  version: 1,
  scenario: {
    feature: 'features/orders.saffron',
    name: 'Export the orders',
    cachePath: '.saffron/cache/orders/export-the-orders.json',
  },
  recording: { version: 1, feature: 'features/orders.saffron', scenario: 'Export the orders', steps: [] },
  featureEdits: [
    { file: 'features/orders.saffron', line: 31, before: '    When I export the orders', after: '    When I export all orders' },
  ],
  narrative: 'The export link became a button.',
};

describe('parseProposal', () => {
  it('reads what the review needs', () => {
    const parsed = parseProposal(JSON.stringify(proposal));
    assert.equal(parsed.cachePath, '.saffron/cache/orders/export-the-orders.json');
    assert.equal(parsed.scenario, 'Export the orders');
    assert.equal(parsed.featureEdits.length, 1);
    assert.equal(parsed.proposedRecordingText, `${JSON.stringify(proposal.recording, null, 2)}\n`);
    assert.match(reviewPrompt(parsed), /Export the orders.*export link became a button.*1 feature-file edit\./);
  });

  it('names the first missing field', () => {
    assert.throws(() => parseProposal('{'), /not valid JSON/);
    assert.throws(() => parseProposal('[]'), /JSON object/);
    assert.throws(() => parseProposal('{"recording": {}}'), /missing "scenario"/);
    assert.throws(() => parseProposal('{"scenario": {}, "recording": {}}'), /scenario.cachePath/);
    assert.throws(() => parseProposal('{"scenario": {"cachePath": "x.json"}}'), /missing "recording"/);
  });
});

describe('prepareSnippets', () => {
  it('scopes entries to the Saffron languages and keeps an explicit scope', () => {
    const stdout = JSON.stringify({
      'I see the orders page': { body: ['I see the orders page'], prefix: 'I see the orders page', description: '✓ recorded' },
      'own scope': { body: ['x'], prefix: 'x', scope: 'markdown' },
    });
    const prepared = prepareSnippets(stdout);
    const written = JSON.parse(prepared.text) as Record<string, { scope: string; description?: string }>;
    assert.equal(prepared.count, 2);
    assert.equal(written['I see the orders page']?.scope, SNIPPET_SCOPE);
    assert.equal(written['I see the orders page']?.description, '✓ recorded');
    assert.equal(written['own scope']?.scope, 'markdown');
    assert.ok(prepared.text.endsWith('}\n'));
  });

  it('refuses output that is not a snippets object', () => {
    assert.throws(() => prepareSnippets('checked 4 file(s)'), /did not print JSON/);
    assert.throws(() => prepareSnippets('[1]'), /JSON object/);
    assert.throws(() => prepareSnippets('{"a": {"body": "x"}}'), /no body or prefix/);
  });
});

describe('scenarioLensAt', () => {
  const lenses = [
    { line: 1, command: 'saffron.runFeature', arguments: ['features/orders.saffron'] },
    { line: 7, command: 'saffron.run', arguments: ['features/orders.saffron:8'] },
    { line: 7, command: 'saffron.reviewProposal', arguments: ['.saffron/proposals/orders/x.json'] },
    { line: 12, command: 'saffron.run', arguments: ['features/orders.saffron:13'] },
  ];

  it('takes the scenario that starts at or above the cursor', () => {
    assert.equal(firstStringArgument(scenarioLensAt(lenses, 7)?.arguments), 'features/orders.saffron:8');
    assert.equal(firstStringArgument(scenarioLensAt(lenses, 11)?.arguments), 'features/orders.saffron:8');
    assert.equal(firstStringArgument(scenarioLensAt(lenses, 40)?.arguments), 'features/orders.saffron:13');
    assert.equal(scenarioLensAt(lenses, 3), undefined);
  });

  it('reads only a non-empty string argument', () => {
    assert.equal(firstStringArgument([]), undefined);
    assert.equal(firstStringArgument([42]), undefined);
    assert.equal(firstStringArgument(['']), undefined);
    assert.equal(firstStringArgument(undefined), undefined);
  });
});
