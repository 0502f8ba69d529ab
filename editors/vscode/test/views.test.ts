// The Proposals and CI Runs views' rows, from JSON shaped as the CLI prints it
// (`saffron proposals --format json`, `saffron runs --json`, `saffron import --run ID --json`).

import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { importLines, proposalRows, runRows } from '../src/ciViews';

describe('Proposals view', () => {
  it('shows each proposal with its feature, what holds it back and where it came from', () => {
    const rows = proposalRows(
      JSON.stringify({
        proposals: [
          {
            path: '.saffron/proposals/new-order/an-order-needs-a-customer.json',
            id: 'new-order/an-order-needs-a-customer',
            feature: 'features/new_order.saffron',
            scenario: 'An order needs a customer',
            narrative: 'The save button moved.',
            stale: false,
            staleReasons: [],
            unverified: null,
            refused: [],
            differentControls: [],
            acceptable: true,
            importedFrom: { revision: 'abc', run: { provider: 'github-actions', id: '4242' }, bundle: 'saffron-bundle.zip' },
          },
          {
            path: '.saffron/proposals/cart/add.json',
            id: 'cart/add',
            feature: 'features/cart.feature',
            scenario: 'Add',
            stale: true,
            staleReasons: ['the steps changed since it was filed'],
            acceptable: false,
            importedFrom: null,
          },
        ],
        unreadable: [],
        handlers: [],
      }),
    );
    assert.equal(rows.length, 2);
    const [first, second] = rows;
    assert.ok(first !== undefined && second !== undefined);
    assert.equal(first.label, 'An order needs a customer');
    assert.equal(first.description, 'features/new_order.saffron · from CI run 4242');
    assert.equal(first.contextValue, 'proposal');
    assert.match(first.tooltip, /The save button moved\.\nfrom CI run 4242/);
    assert.equal(second.description, 'features/cart.feature · STALE');
    assert.equal(second.contextValue, 'proposal-held', 'Accept is not offered on a stale proposal');
    assert.match(second.tooltip, /the steps changed since it was filed/);
  });

  it('says what is wrong with an answer that is not the CLI\'s JSON', () => {
    assert.throws(() => proposalRows('saffron: error'), /not JSON/);
    assert.throws(() => proposalRows('{}'), /"proposals"/);
  });
});

describe('CI Runs view', () => {
  it('lists runs with their outcome and the proposals pending from each', () => {
    const listed = runRows(
      JSON.stringify({
        branch: 'main',
        runs: [
          { id: '4242', name: 'e2e', number: 17, status: 'completed', conclusion: 'failure', event: 'push', branch: 'main', commit: 'abcdef123', link: 'https://github.example/r/4242', pending: ['.saffron/proposals/a/b.json'] },
          { id: '4241', name: 'e2e', number: 16, status: 'in_progress', conclusion: '', event: 'push', branch: 'main', commit: 'abcdef000', link: '', pending: [] },
        ],
      }),
    );
    assert.ok('runs' in listed);
    const [newest, older] = listed.runs;
    assert.ok(newest !== undefined && older !== undefined);
    assert.equal(newest.label, 'e2e #17');
    assert.equal(newest.description, 'failure · push · abcdef1 · 1 pending');
    assert.equal(older.description, 'in_progress · push · abcdef0');
    assert.equal(older.link, undefined);
  });

  it('shows the problem the CLI reported, as it reported it', () => {
    const listed = runRows(JSON.stringify({ problem: { kind: 'no-gh', message: 'GitHub\'s CLI, gh, is not on PATH' }, error: 'x' }));
    assert.deepEqual(listed, { problem: { kind: 'no-gh', message: 'GitHub\'s CLI, gh, is not on PATH' } });
  });

  it('shows what an import did under its run, and a refusal with its hint', () => {
    const done = importLines(
      JSON.stringify({
        bundles: [],
        warnings: ['made on another commit'],
        proposals: [
          { path: '.saffron/proposals/a/b.json', outcome: 'imported', reasons: [] },
          { path: '.saffron/proposals/c/d.json', outcome: 'stale', reasons: ['the steps changed'] },
        ],
        changed: true,
      }),
    );
    assert.deepEqual(done, {
      lines: ['warning: made on another commit', 'imported: .saffron/proposals/a/b.json', 'stale: .saffron/proposals/c/d.json (the steps changed)'],
      failed: false,
    });
    const refused = importLines(JSON.stringify({ error: 'damaged', hint: 'download it again' }));
    assert.deepEqual(refused, { lines: ['refused: damaged', 'hint: download it again'], failed: true });
  });
});
