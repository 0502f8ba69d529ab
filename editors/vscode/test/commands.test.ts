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
      `printf '%s\\n' "$*" > "${project}/args"`,
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

/** The arguments the stand-in binary was last run with (Accept and Reject run it directly). */
function lastArgs(): string {
  return fs.readFileSync(path.join(project, 'args'), 'utf8').trim();
}

/** The last question asked with buttons (the review prompt). */
function lastPrompt(): Recorded['messages'][number] | undefined {
  return recorded.messages.filter((message) => message.items.length > 0 && message.level === 'info').at(-1);
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
    const prompt = lastPrompt();
    assert.deepEqual(prompt?.items, ['Accept', 'Reject']);
    assert.match(prompt?.text ?? '', /Export the orders.*export link became a button/);
    assert.equal(recorded.tasks.length, tasksBefore, 'the decision runs saffron itself, not a task');
    assert.equal(lastArgs(), `reject ${relative}`);
    assert.equal(fs.readFileSync(path.join(project, 'cwd'), 'utf8').trim(), project);
    // The stand-in exits 2: what saffron said is shown, not swallowed.
    assert.equal(recorded.messages.at(-1)?.level, 'error');
    assert.match(recorded.messages.at(-1)?.text ?? '', /unexpected arguments: reject.*exit code 2/);
  });

  it('offers Accept with feature edits when the proposal has some', async () => {
    const { relative } = writeProposal([
      { file: 'features/orders.saffron', line: 31, before: '    When I export the orders', after: '    When I export all orders' },
    ]);
    answer = 'Accept with feature edits';
    await command('saffron.reviewProposal')(relative);
    assert.deepEqual(lastPrompt()?.items, ['Accept', 'Accept with feature edits', 'Reject']);
    assert.equal(lastArgs(), `accept --with-feature-edit ${relative}`);
    answer = 'Accept';
    await command('saffron.reviewProposal')(relative);
    assert.equal(lastArgs(), `accept ${relative}`);
  });

  it('runs nothing when the review is dismissed, and refuses paths outside the project', async () => {
    const { relative } = writeProposal([]);
    answer = undefined;
    fs.rmSync(path.join(project, 'args'), { force: true });
    const tasksBefore = recorded.tasks.length;
    await command('saffron.reviewProposal')(relative);
    await command('saffron.reviewProposal')('../../../etc/passwd.json');
    assert.equal(recorded.tasks.length, tasksBefore);
    assert.ok(!fs.existsSync(path.join(project, 'args')), 'saffron was not run');
    assert.match(recorded.messages.at(-1)?.text ?? '', /outside the project root|is gone/);
    fs.rmSync(path.join(project, relative));
    await command('saffron.reviewProposal')(relative);
    assert.match(recorded.messages.at(-1)?.text ?? '', /is gone/);
  });
});

// Accept and Reject end to end: the real `saffron` (SAFFRON_BIN, as tests/nvim uses it) on a
// real proposal (tests/review/project, generated and kept fresh by crates/saffron-cli/tests/review.rs).
describe('Accept and Reject with the real saffron', { skip: process.env.SAFFRON_BIN === undefined && 'set SAFFRON_BIN' }, () => {
  const fixture = path.join(repositoryRoot, 'tests/review/project');
  const relative = '.saffron/proposals/review/buy.json';
  const cache = path.join(project, '.saffron/cache/review/buy.json');
  const read = (file: string) => fs.readFileSync(file, 'utf8');

  function copyFixture(): void {
    fs.cpSync(path.join(fixture, 'features/review.feature'), path.join(project, 'features/review.feature'));
    for (const store of ['cache', 'proposals']) {
      fs.cpSync(path.join(fixture, '.saffron', store, 'review'), path.join(project, '.saffron', store, 'review'), {
        recursive: true,
      });
    }
  }

  before(() => {
    settings['saffron.path'] = path.resolve(repositoryRoot, process.env.SAFFRON_BIN ?? '');
  });

  after(() => {
    settings['saffron.path'] = binary;
  });

  it('Accept writes the proposal\'s recording and removes the proposal', async () => {
    copyFixture();
    const proposed = (JSON.parse(read(path.join(project, relative))) as { recording: unknown }).recording;
    answer = 'Accept';
    await command('saffron.reviewProposal')(relative);
    assert.match(recorded.messages.at(-1)?.text ?? '', /Saffron: Accepted \.saffron\/proposals\/review\/buy\.json/);
    assert.deepEqual(JSON.parse(read(cache)), proposed);
    assert.ok(!fs.existsSync(path.join(project, relative)), 'the proposal is gone');
  });

  it('Reject removes the proposal and leaves the recording as it was', async () => {
    copyFixture();
    const committed = read(cache);
    answer = 'Reject';
    await command('saffron.reviewProposal')(relative);
    assert.match(recorded.messages.at(-1)?.text ?? '', /Saffron: Rejected \.saffron\/proposals\/review\/buy\.json/);
    assert.equal(read(cache), committed);
    assert.ok(!fs.existsSync(path.join(project, relative)), 'the proposal is gone');
  });

  it('Accept on a stale proposal shows the refusal and changes nothing', async () => {
    copyFixture();
    const feature = path.join(project, 'features/review.feature');
    fs.writeFileSync(feature, read(feature).replace('When I buy', 'When I buy it'));
    const committed = read(cache);
    answer = 'Accept';
    await command('saffron.reviewProposal')(relative);
    const shown = recorded.messages.at(-1);
    assert.equal(shown?.level, 'error');
    assert.match(shown?.text ?? '', /refused: the proposal is stale.*steps changed.*\(exit code 1\)/);
    assert.equal(read(cache), committed);
    assert.ok(fs.existsSync(path.join(project, relative)), 'the proposal is kept');
  });
});

// The Proposals view with the real `saffron`: its rows are `saffron proposals --format json`, and
// Accept on a row accepts that proposal.
describe('Proposals view with the real saffron', { skip: process.env.SAFFRON_BIN === undefined && 'set SAFFRON_BIN' }, () => {
  const fixture = path.join(repositoryRoot, 'tests/review/project');
  const relative = '.saffron/proposals/review/buy.json';

  before(() => {
    fs.cpSync(path.join(fixture, 'features/review.feature'), path.join(project, 'features/review.feature'));
    for (const store of ['cache', 'proposals']) {
      fs.cpSync(path.join(fixture, '.saffron', store, 'review'), path.join(project, '.saffron', store, 'review'), {
        recursive: true,
      });
    }
    settings['saffron.path'] = path.resolve(repositoryRoot, process.env.SAFFRON_BIN ?? '');
  });

  after(() => {
    settings['saffron.path'] = binary;
  });

  it('lists the pending proposal and Accept on its row accepts it', async () => {
    const extension = require('../src/extension') as typeof import('../src/extension');
    const rows = await extension.views.proposals.getChildren();
    const row = rows.find((candidate) => candidate.path === relative);
    assert.ok(row, `the view lists ${relative}: ${JSON.stringify(rows)}`);
    assert.equal(row.id, 'review/buy');
    assert.equal(row.contextValue, 'proposal');
    await command('saffron.proposals.accept')(row);
    assert.match(recorded.messages.at(-1)?.text ?? '', /Saffron: Accepted \.saffron\/proposals\/review\/buy\.json/);
    assert.ok(!fs.existsSync(path.join(project, relative)), 'the proposal is gone');
    const after = await extension.views.proposals.getChildren();
    assert.ok(!after.some((candidate) => candidate.path === relative), 'and gone from the view');
  });
});

// The CI Runs view against a stand-in `saffron` that answers `runs --json` and `import --run`.
describe('CI Runs view', () => {
  const standIn = path.join(project, 'bin', 'saffron-ci');

  before(() => {
    fs.writeFileSync(
      standIn,
      [
        '#!/bin/sh',
        `printf '%s\\n' "$*" >> "${project}/ci-args"`,
        'if [ "$1 $2" = "runs --json" ]; then',
        `  printf '%s' '{"branch":"main","runs":[{"id":"4242","name":"e2e","number":17,"status":"completed","conclusion":"failure","event":"push","branch":"main","commit":"abcdef1","link":"https://github.example/r/4242","pending":[]}]}'`,
        '  exit 0',
        'fi',
        'if [ "$1 $2 $3 $4" = "import --run 4242 --json" ]; then',
        `  printf '%s' '{"bundles":[],"warnings":[],"proposals":[{"path":".saffron/proposals/a/b.json","outcome":"imported","reasons":[]}],"changed":true}'`,
        '  exit 0',
        'fi',
        'echo "saffron: unexpected arguments: $*" >&2',
        'exit 2',
        '',
      ].join('\n'),
    );
    fs.chmodSync(standIn, 0o755);
    settings['saffron.path'] = standIn;
  });

  after(() => {
    settings['saffron.path'] = binary;
  });

  it('lists the runs, and Import shows what the import did under the run', async () => {
    const extension = require('../src/extension') as typeof import('../src/extension');
    const runs = await extension.views.runs.getChildren();
    assert.equal(runs.length, 1);
    const run = runs[0];
    assert.ok(run !== undefined && run.kind === 'run');
    assert.equal(run.row.id, '4242');
    await command('saffron.runs.import')(run);
    const lines = await extension.views.runs.getChildren(run);
    assert.deepEqual(lines, [{ kind: 'line', text: 'imported: .saffron/proposals/a/b.json' }]);
    const asked = fs.readFileSync(path.join(project, 'ci-args'), 'utf8');
    assert.match(asked, /^runs --json\nimport --run 4242 --json\n/);
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
