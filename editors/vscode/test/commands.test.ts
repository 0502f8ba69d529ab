// The extension's commands, driven through a stand-in for the VS Code API (test/fake-vscode.ts):
// activation, the code lens commands, the proposal review and the snippet refresh. The language
// client is not started (saffron.path names no binary at activation); a VS Code window is needed
// for that part.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { createFakeVscode, type Recorded } from './fake-vscode';

const extensionRoot = path.resolve(__dirname, '../..');
const repositoryRoot = path.resolve(extensionRoot, '../..');

const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'saffron-vscode-commands-')));
const binary = path.join(project, 'bin', 'saffron');
const settings: Record<string, unknown> = { 'saffron.path': path.join(project, 'no-such-saffron') };
let answer: string | undefined;
let recorded: Recorded;

function prepareProject(): void {
  fs.cpSync(path.join(repositoryRoot, 'features'), path.join(project, 'features'), { recursive: true });
  fs.cpSync(path.join(repositoryRoot, '.saffron/cache'), path.join(project, '.saffron/cache'), { recursive: true });
  fs.mkdirSync(path.dirname(binary), { recursive: true });
  // Stands in for `saffron steps --format snippets`; remembers the folder it ran in.
  fs.writeFileSync(
    binary,
    [
      '#!/bin/sh',
      `pwd > "${project}/cwd"`,
      'if [ "$1 $2 $3" = "steps --format snippets" ]; then',
      `  printf '%s' '{"I see the orders page": {"body": ["I see the orders page"], "description": "recorded", "prefix": "I see the orders page"}}'`,
      '  exit 0',
      'fi',
      'echo "saffron: unexpected arguments: $*" >&2',
      'exit 2',
      '',
    ].join('\n'),
  );
  fs.chmodSync(binary, 0o755);
}

function command(id: string): (...args: unknown[]) => Promise<unknown> {
  const handler = recorded.commands.get(id);
  assert.ok(handler, `${id} is registered`);
  return async (...args: unknown[]) => handler(...args);
}

function lastTask(): Recorded['tasks'][number] {
  const task = recorded.tasks.at(-1);
  assert.ok(task, 'a task ran');
  return task;
}

function writeProposal(featureEdits: unknown[]): { relative: string; recording: unknown } {
  const cachePath = '.saffron/cache/orders/export-the-orders.json';
  const recording = JSON.parse(fs.readFileSync(path.join(project, cachePath), 'utf8')) as Record<string, unknown>;
  recording.baseUrl = 'http://localhost:9999';
  const relative = '.saffron/proposals/orders/export-the-orders.json';
  fs.mkdirSync(path.join(project, '.saffron/proposals/orders'), { recursive: true });
  fs.writeFileSync(
    path.join(project, relative),
    JSON.stringify(
      {
        version: 1,
        scenario: { feature: 'features/orders.saffron', name: 'Export the orders', cachePath },
        recording,
        featureEdits,
        narrative: 'The export link became a button.',
      },
      null,
      2,
    ),
  );
  return { relative, recording };
}

before(async () => {
  prepareProject();
  const fake = createFakeVscode({
    workspaceFolders: [project],
    settings,
    answer: (level) => (level === 'info' ? answer : undefined),
  });
  recorded = fake.recorded;
  const Module = require('node:module') as { _load: (request: string, ...rest: unknown[]) => unknown };
  const load = Module._load;
  Module._load = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? fake.module : load.call(this, request, ...rest);
  };
  const extension = require('../src/extension') as typeof import('../src/extension');
  await extension.activate({ subscriptions: [] } as unknown as import('vscode').ExtensionContext);
  settings['saffron.path'] = binary;
});

after(() => {
  fs.rmSync(project, { recursive: true, force: true });
});

describe('activation', () => {
  it('registers every command package.json contributes', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(extensionRoot, 'package.json'), 'utf8')) as {
      contributes: { commands: { command: string }[] };
    };
    for (const { command: id } of manifest.contributes.commands) {
      assert.ok(recorded.commands.has(id), `${id} is registered`);
    }
  });

  it('says which binary is missing and how to set it, instead of starting the server', () => {
    const error = recorded.messages.find((message) => message.level === 'error');
    assert.ok(error, 'an error message was shown');
    assert.match(error.text, /no-such-saffron/);
    assert.match(error.text, /saffron\.path/);
    assert.deepEqual(error.items, ['Open Settings', 'Show Output']);
    assert.ok(recorded.log.some((line) => line.includes('cannot start saffron')));
  });
});

describe('code lens commands', () => {
  it('saffron.run runs `saffron run <path>:<line>` from the project root', async () => {
    await command('saffron.run')('features/orders.saffron:8');
    assert.deepEqual(lastTask(), {
      name: 'run features/orders.saffron:8',
      process: binary,
      args: ['run', 'features/orders.saffron:8'],
      cwd: project,
    });
  });

  it('saffron.runFeature runs `saffron run <path>`', async () => {
    await command('saffron.runFeature')('features/sign_in.feature');
    assert.deepEqual(lastTask().args, ['run', 'features/sign_in.feature']);
    assert.equal(lastTask().cwd, project);
  });

  it('saffron.reviewProposal diffs the committed recording with the proposed one, and Reject rejects', async () => {
    const { relative, recording } = writeProposal([]);
    answer = 'Reject';
    const tasksBefore = recorded.tasks.length;
    await command('saffron.reviewProposal')(relative);
    const diff = recorded.executed.find((entry) => entry.command === 'vscode.diff');
    assert.ok(diff, 'vscode.diff was opened');
    const [left, right, title] = diff.args as [{ fsPath: string }, { scheme: string; toString(): string }, string];
    assert.equal(left.fsPath, path.join(project, '.saffron/cache/orders/export-the-orders.json'));
    assert.equal(right.scheme, 'saffron-proposal');
    assert.equal(title, 'Export the orders: committed ↔ proposed');
    const provider = recorded.providers.get('saffron-proposal');
    assert.ok(provider, 'the proposal content provider is registered');
    assert.equal(provider.provideTextDocumentContent(right), `${JSON.stringify(recording, null, 2)}\n`);
    const prompt = recorded.messages.at(-1);
    assert.deepEqual(prompt?.items, ['Accept', 'Reject']);
    assert.match(prompt?.text ?? '', /Export the orders.*export link became a button/);
    assert.equal(recorded.tasks.length, tasksBefore + 1);
    assert.deepEqual(lastTask().args, ['reject', relative]);
  });

  it('offers Accept with feature edits when the proposal has some', async () => {
    const { relative } = writeProposal([
      { file: 'features/orders.saffron', line: 31, before: '    When I export the orders', after: '    When I export all orders' },
    ]);
    answer = 'Accept with feature edits';
    await command('saffron.reviewProposal')(relative);
    assert.deepEqual(recorded.messages.at(-1)?.items, ['Accept', 'Accept with feature edits', 'Reject']);
    assert.deepEqual(lastTask().args, ['accept', '--with-feature-edit', relative]);
    answer = 'Accept';
    await command('saffron.reviewProposal')(relative);
    assert.deepEqual(lastTask().args, ['accept', relative]);
  });

  it('runs nothing when the review is dismissed, and refuses paths outside the project', async () => {
    const { relative } = writeProposal([]);
    answer = undefined;
    const tasksBefore = recorded.tasks.length;
    await command('saffron.reviewProposal')(relative);
    await command('saffron.reviewProposal')('../../../etc/passwd.json');
    assert.equal(recorded.tasks.length, tasksBefore);
    assert.match(recorded.messages.at(-1)?.text ?? '', /outside the project root|is gone/);
    fs.rmSync(path.join(project, relative));
    await command('saffron.reviewProposal')(relative);
    assert.match(recorded.messages.at(-1)?.text ?? '', /is gone/);
  });
});

describe('Saffron: Refresh step snippets', () => {
  it('writes .vscode/saffron.code-snippets from `saffron steps --format snippets`, scoped to Saffron files', async () => {
    answer = undefined;
    await command('saffron.refreshSnippets')();
    const written = recorded.written.get(path.join(project, '.vscode', 'saffron.code-snippets'));
    assert.ok(written, 'the snippets file was written');
    const snippets = JSON.parse(written) as Record<string, { scope: string; body: string[] }>;
    assert.equal(snippets['I see the orders page']?.scope, 'gherkin,saffron');
    assert.equal(fs.readFileSync(path.join(project, 'cwd'), 'utf8').trim(), project);
    assert.match(recorded.messages.at(-1)?.text ?? '', /wrote 1 step snippet to \.vscode\/saffron\.code-snippets/);
  });
});
