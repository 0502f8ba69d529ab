// Playwright MCP's `browser_snapshot` of the demo app's pages, beside Saffron's, counted with one
// tokenizer (gpt-tokenizer, o200k_base: pure JS, offline).
//
// Usage: node snapshot-playwright-mcp.mjs < saffron-snapshots.json
// The input (stdin) is `{ baseUrl, email, password, pages: [{ path, signedIn, saffron }] }`; the output
// (stdout) is one JSON object per page: chars and tokens of both snapshots and the interactive
// elements (role + name) Playwright lists that Saffron's snapshot does not.
//
// Playwright MCP is driven over stdio as an MCP client does: newline-delimited JSON-RPC.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';

const here = dirname(fileURLToPath(import.meta.url));
const input = JSON.parse(readFileSync(0, 'utf8'));
const require = createRequire(import.meta.url);
const cli = join(dirname(require.resolve('@playwright/mcp/package.json')), 'cli.js');

// The files it writes beside its answers (page snapshots as YAML) go to a scratch folder.
const outputDir = mkdtempSync(join(tmpdir(), 'saffron-playwright-mcp-'));
const server = spawn(
  process.execPath,
  [cli, '--headless', '--executable-path', '/usr/bin/chromium', '--isolated', '--no-sandbox', '--output-dir', outputDir],
  { cwd: here, stdio: ['pipe', 'pipe', 'inherit'] },
);
const waiting = new Map();
let nextId = 1;
let buffered = '';
server.stdout.on('data', (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, newline).trim();
    buffered = buffered.slice(newline + 1);
    if (!line) continue;
    const message = JSON.parse(line);
    if (message.id != null && waiting.has(message.id)) {
      const { resolve, reject } = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error) reject(new Error(JSON.stringify(message.error)));
      else resolve(message.result);
    }
  }
});
const request = (method, params) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    waiting.set(id, { resolve, reject });
    server.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
const notify = (method, params) => server.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, params }) + '\n');
const tool = async (name, args) => {
  const result = await request('tools/call', { name, arguments: args });
  const text = result.content.filter((part) => part.type === 'text').map((part) => part.text).join('\n');
  if (result.isError) throw new Error(`${name} failed: ${text}`);
  return text;
};

// The interactive elements of a snapshot, as `role "name"`. Playwright writes one element per
// YAML line (`- button "Save" [ref=e3]`, quoted when it holds a `#`), options as lines of their
// own; Saffron may write several on one line (`row: link "#1001" [ref=e4] | ...`), each followed
// by its ref, and a select's options inline (`[options: Tea (selected) | Mugs]`).
const INTERACTIVE = new Set([
  'button', 'link', 'textbox', 'searchbox', 'combobox', 'listbox', 'option', 'checkbox', 'radio', 'switch',
  'slider', 'spinbutton', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem',
]);
const ELEMENT = /^([a-z]+)(?: "((?:[^"\\]|\\.)*)")?/;
const unescape = (name) => (name || '').replace(/\\(.)/g, '$1');
const playwrightElements = (snapshot) => {
  const found = [];
  for (const raw of snapshot.split('\n')) {
    let line = raw.trim().replace(/^- /, '');
    if (line.startsWith("'")) line = line.slice(1).replace(/'(:.*)?$/, '').replace(/''/g, "'");
    const match = ELEMENT.exec(line);
    if (match && INTERACTIVE.has(match[1])) found.push(`${match[1]} "${unescape(match[2])}"`);
  }
  return found;
};
const saffronElements = (snapshot) => {
  const found = [];
  const withRef = /([a-z]+)(?: "((?:[^"\\]|\\.)*)")?(?: \[[a-z]+\])* \[ref=e\d+\]/g;
  for (const line of snapshot.split('\n')) {
    for (const match of line.matchAll(withRef)) {
      if (INTERACTIVE.has(match[1])) found.push(`${match[1]} "${unescape(match[2])}"`);
    }
    const options = /\[options: (.*)\]/.exec(line);
    if (options) for (const option of options[1].split(' | ')) found.push(`option "${option.replace(/ \(selected\)$/, '')}"`);
  }
  return found;
};

// Playwright MCP's page snapshot, without the tool's own preamble (code, console, tabs).
const pageSnapshot = (text) => {
  const start = text.indexOf('```yaml');
  if (start < 0) return text;
  const end = text.indexOf('```', start + 7);
  return text.slice(start + 8, end < 0 ? undefined : end).trim();
};

try {
  await request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'saffron-bench', version: '0' },
  });
  notify('notifications/initialized', {});
  let signedIn = false;
  const results = [];
  for (const page of input.pages) {
    if (page.signedIn && !signedIn) {
      await tool('browser_navigate', { url: input.baseUrl + '/login' });
      await tool('browser_evaluate', {
        function: `async () => (await fetch('/api/session', { method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: ${JSON.stringify(input.email)}, password: ${JSON.stringify(input.password)} }) })).status`,
      });
      signedIn = true;
    }
    await tool('browser_navigate', { url: input.baseUrl + page.path });
    const whole = await tool('browser_snapshot', {});
    const playwright = pageSnapshot(whole);
    const kept = new Set(saffronElements(page.saffron));
    const listed = playwrightElements(playwright);
    const missing = listed.filter((element) => !kept.has(element));
    results.push({
      path: page.path,
      playwright: { chars: playwright.length, tokens: encode(playwright).length, wholeChars: whole.length, wholeTokens: encode(whole).length },
      saffron: { chars: page.saffron.length, tokens: encode(page.saffron).length },
      interactive: listed.length,
      missing,
      playwrightSnapshot: playwright,
    });
  }
  process.stdout.write(JSON.stringify(results) + '\n');
} finally {
  server.kill();
  rmSync(outputDir, { recursive: true, force: true });
}
