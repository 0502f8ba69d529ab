// The Saffron extension: a thin client of `saffron lsp`, plus the commands the server's code
// lenses name (run a scenario or a feature, review a proposal), which only an editor can do.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  type ClientCapabilities,
  CodeLensRequest,
  type FeatureState,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
} from 'vscode-languageclient/node';

import { importLines, type ProposalRow, proposalRows, type RunRow, runRows } from './ciViews';
import { findExecutable } from './executable';
import { firstStringArgument, type LensLike, scenarioLensAt } from './lenses';
import { findProjectRoot, relativeToRoot, resolveInsideRoot, splitScenarioArgument } from './project';
import { parseProposal, reviewPrompt } from './proposal';
import { prepareSnippets } from './snippets';

const LANGUAGES = ['gherkin', 'saffron'] as const;
/**
 * The code lens commands this extension carries out itself (in the terminal panel, with a diff
 * for a proposal). The server executes them for clients that do not; told so, it does not
 * offer them, which would make the language client register a second `saffron.run`.
 */
const OWN_LENS_COMMANDS = ['saffron.run', 'saffron.runFeature', 'saffron.reviewProposal'];
const TASK_TYPE = 'saffron';
const PROPOSAL_SCHEME = 'saffron-proposal';

let output: vscode.LogOutputChannel | undefined;
let server: ServerManager | undefined;

function log(message: string): void {
  output?.info(message);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function firstWorkspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

function configuredPath(): string {
  const value = vscode.workspace.getConfiguration('saffron').get<string>('path', 'saffron');
  return value.trim().length > 0 ? value : 'saffron';
}

/** The `saffron` binary from `saffron.path`, or undefined after telling the user why not. */
function resolveBinary(): string | undefined {
  const configured = configuredPath();
  let found: string | undefined;
  try {
    found = findExecutable(configured, { workspaceFolder: firstWorkspaceFolder() });
  } catch (error) {
    reportMissingBinary(configured, errorMessage(error));
    return undefined;
  }
  if (found === undefined) {
    reportMissingBinary(configured, undefined);
  }
  return found;
}

function reportMissingBinary(configured: string, reason: string | undefined): void {
  const detail =
    reason ??
    (configured.includes('/') || configured.includes('\\')
      ? `no executable file at "${configured}"`
      : `"${configured}" is not on PATH`);
  log(`cannot start saffron: ${detail}`);
  void vscode.window
    .showErrorMessage(
      `Saffron: ${detail}. Install it with \`cargo install --path crates/saffron-cli\` or set "saffron.path".`,
      'Open Settings',
      'Show Output',
    )
    .then((choice) => {
      if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'saffron.path');
      } else if (choice === 'Show Output') {
        output?.show(true);
      }
    });
}

// ---------------------------------------------------------------------------------------------
// The language server

/** Declares OWN_LENS_COMMANDS as `experimental.commands.commands`, as rust-analyzer's client does. */
class OwnCommandsFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, commands: { commands: OWN_LENS_COMMANDS } };
  }

  initialize(): void {}

  getState(): FeatureState {
    return { kind: 'static' };
  }

  clear(): void {}
}

class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly channel: vscode.LogOutputChannel) {}

  get running(): LanguageClient | undefined {
    return this.client?.isRunning() === true ? this.client : undefined;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  dispose(): void {
    void this.stop();
  }

  /** Start and stop one at a time, in the order they were asked for. */
  private enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async doStart(): Promise<void> {
    const binary = resolveBinary();
    if (binary === undefined) {
      return;
    }
    const serverOptions: ServerOptions = {
      command: binary,
      args: ['lsp'],
      // No `transport`: stdio is the default, and naming it makes the client append `--stdio`,
      // which `saffron lsp` refuses (the server then never starts).
      options: { cwd: firstWorkspaceFolder() },
    };
    const watchers = [
      vscode.workspace.createFileSystemWatcher('**/*.{feature,saffron}'),
      vscode.workspace.createFileSystemWatcher('**/.saffron/{cache,proposals}/**/*.json'),
      vscode.workspace.createFileSystemWatcher('**/saffron.toml'),
    ];
    const clientOptions: LanguageClientOptions = {
      documentSelector: LANGUAGES.map((language) => ({ scheme: 'file', language })),
      synchronize: { fileEvents: watchers },
      outputChannel: this.channel,
      diagnosticCollectionName: 'saffron',
      markdown: { isTrusted: false, supportHtml: false },
    };
    // The id 'saffron' makes the client read `saffron.trace.server` by itself.
    const client = new LanguageClient('saffron', 'Saffron', serverOptions, clientOptions);
    client.registerFeature(new OwnCommandsFeature());
    this.client = client;
    log(`starting ${binary} lsp`);
    try {
      await client.start();
      log('language server running');
    } catch (error) {
      log(`the language server did not start: ${errorMessage(error)}`);
      this.client = undefined;
      for (const watcher of watchers) {
        watcher.dispose();
      }
      void vscode.window
        .showErrorMessage(`Saffron: the language server did not start (${errorMessage(error)}).`, 'Show Output')
        .then((choice) => {
          if (choice !== undefined) {
            this.channel.show(true);
          }
        });
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client === undefined) {
      return;
    }
    try {
      if (client.needsStop()) {
        await client.stop(2000);
      }
    } catch (error) {
      log(`stopping the language server: ${errorMessage(error)}`);
    }
    // Keeps our output channel, which the client did not create.
    await client.dispose().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Project roots: code lens arguments are relative to the Saffron project root.

function candidateRoots(): string[] {
  const roots: string[] = [];
  const add = (root: string | undefined): void => {
    if (root !== undefined && !roots.includes(root)) {
      roots.push(root);
    }
  };
  const document = vscode.window.activeTextEditor?.document;
  if (document !== undefined && document.uri.scheme === 'file') {
    add(findProjectRoot(document.uri.fsPath));
    add(vscode.workspace.getWorkspaceFolder(document.uri)?.uri.fsPath);
  }
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    add(findProjectRoot(folder.uri.fsPath));
    add(folder.uri.fsPath);
  }
  return roots;
}

/** The project root under which `relative` exists; the likeliest root when none has it. */
function rootFor(relative: string): string | undefined {
  const roots = candidateRoots();
  for (const root of roots) {
    try {
      if (fs.existsSync(resolveInsideRoot(root, relative))) {
        return root;
      }
    } catch {
      // not under this root
    }
  }
  return roots[0];
}

function workspaceScopeOf(directory: string): vscode.WorkspaceFolder | vscode.TaskScope {
  return vscode.workspace.getWorkspaceFolder(vscode.Uri.file(directory)) ?? vscode.TaskScope.Workspace;
}

// ---------------------------------------------------------------------------------------------
// Running saffron in the terminal panel, as a task: arguments go to the process as they are,
// with no shell quoting to get wrong, and `$saffron` turns `file:line:col: severity: message`
// lines into problems.

interface SaffronTaskDefinition extends vscode.TaskDefinition {
  args: string[];
  cwd?: string;
}

function saffronTask(
  definition: SaffronTaskDefinition,
  scope: vscode.WorkspaceFolder | vscode.TaskScope,
  binary: string,
  cwd: string,
): vscode.Task {
  const name = definition.args.join(' ');
  const task = new vscode.Task(
    definition,
    scope,
    name,
    TASK_TYPE,
    new vscode.ProcessExecution(binary, definition.args, { cwd }),
    ['$saffron'],
  );
  task.presentationOptions = {
    reveal: vscode.TaskRevealKind.Always,
    panel: vscode.TaskPanelKind.Shared,
    clear: true,
    focus: false,
  };
  return task;
}

async function runSaffron(root: string, args: string[]): Promise<void> {
  const binary = resolveBinary();
  if (binary === undefined) {
    return;
  }
  log(`${binary} ${args.join(' ')} (in ${root})`);
  await vscode.tasks.executeTask(saffronTask({ type: TASK_TYPE, args }, workspaceScopeOf(root), binary, root));
}

class SaffronTaskProvider implements vscode.TaskProvider {
  provideTasks(): vscode.Task[] {
    const binary = findExecutable(configuredPath(), { workspaceFolder: firstWorkspaceFolder() });
    if (binary === undefined) {
      return [];
    }
    const tasks: vscode.Task[] = [];
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const root = findProjectRoot(folder.uri.fsPath);
      if (root === undefined) {
        continue;
      }
      for (const args of [['run'], ['check'], ['status']]) {
        tasks.push(saffronTask({ type: TASK_TYPE, args }, folder, binary, root));
      }
    }
    return tasks;
  }

  resolveTask(task: vscode.Task): vscode.Task | undefined {
    const definition = task.definition as Partial<SaffronTaskDefinition>;
    if (!Array.isArray(definition.args) || !definition.args.every((arg) => typeof arg === 'string')) {
      return undefined;
    }
    const binary = findExecutable(configuredPath(), { workspaceFolder: firstWorkspaceFolder() });
    if (binary === undefined) {
      return undefined;
    }
    const folder = typeof task.scope === 'object' ? task.scope.uri.fsPath : firstWorkspaceFolder();
    const cwd = definition.cwd ?? (folder === undefined ? undefined : (findProjectRoot(folder) ?? folder));
    if (cwd === undefined) {
      return undefined;
    }
    const scope = typeof task.scope === 'object' ? task.scope : vscode.TaskScope.Workspace;
    return saffronTask({ ...definition, type: TASK_TYPE, args: definition.args }, scope, binary, cwd);
  }
}

// ---------------------------------------------------------------------------------------------
// saffron.run and saffron.runFeature

/** English scenario headers, for when the server is not there to say where scenarios are. */
const SCENARIO_HEADER = /^\s*(Scenario Outline|Scenario Template|Scenario|Example|Fixture)\s*:/;

async function scenarioLensesOf(document: vscode.TextDocument): Promise<LensLike[] | undefined> {
  const client = server?.running;
  if (client === undefined) {
    return undefined;
  }
  try {
    const lenses = await client.sendRequest(CodeLensRequest.type, {
      textDocument: { uri: client.code2ProtocolConverter.asUri(document.uri) },
    });
    return (lenses ?? []).flatMap((lens) =>
      lens.command === undefined
        ? []
        : [{ line: lens.range.start.line, command: lens.command.command, arguments: lens.command.arguments ?? [] }],
    );
  } catch (error) {
    log(`textDocument/codeLens: ${errorMessage(error)}`);
    return undefined;
  }
}

/** `path:line` of the scenario at the cursor, or the file's path when the cursor is in none. */
async function scenarioAtCursor(editor: vscode.TextEditor): Promise<{ root: string; argument: string } | undefined> {
  const document = editor.document;
  if (document.uri.scheme !== 'file') {
    return undefined;
  }
  const root =
    findProjectRoot(document.uri.fsPath) ??
    vscode.workspace.getWorkspaceFolder(document.uri)?.uri.fsPath ??
    path.dirname(document.uri.fsPath);
  const relative = relativeToRoot(root, document.uri.fsPath);
  const cursorLine = editor.selection.active.line;
  const lenses = await scenarioLensesOf(document);
  if (lenses !== undefined) {
    const argument = firstStringArgument(scenarioLensAt(lenses, cursorLine)?.arguments);
    return { root, argument: argument ?? relative };
  }
  for (let line = cursorLine; line >= 0; line -= 1) {
    if (SCENARIO_HEADER.test(document.lineAt(line).text)) {
      return { root, argument: `${relative}:${line + 1}` };
    }
  }
  return { root, argument: relative };
}

async function runScenarioCommand(argument?: unknown): Promise<void> {
  if (typeof argument === 'string' && splitScenarioArgument(argument) !== undefined) {
    const file = splitScenarioArgument(argument)?.file ?? argument;
    const root = rootFor(file);
    if (root === undefined) {
      void vscode.window.showErrorMessage('Saffron: open the folder of the project to run its scenarios.');
      return;
    }
    await runSaffron(root, ['run', argument]);
    return;
  }
  const editor = vscode.window.activeTextEditor;
  const target = editor === undefined ? undefined : await scenarioAtCursor(editor);
  if (target === undefined) {
    void vscode.window.showErrorMessage('Saffron: open a .feature or .saffron file to run a scenario.');
    return;
  }
  await runSaffron(target.root, ['run', target.argument]);
}

async function runFeatureCommand(argument?: unknown): Promise<void> {
  if (typeof argument === 'string' && argument.length > 0) {
    const root = rootFor(argument);
    if (root === undefined) {
      void vscode.window.showErrorMessage('Saffron: open the folder of the project to run its features.');
      return;
    }
    await runSaffron(root, ['run', argument]);
    return;
  }
  const document = vscode.window.activeTextEditor?.document;
  if (document === undefined || document.uri.scheme !== 'file') {
    void vscode.window.showErrorMessage('Saffron: open a .feature or .saffron file to run it.');
    return;
  }
  const root =
    findProjectRoot(document.uri.fsPath) ??
    vscode.workspace.getWorkspaceFolder(document.uri)?.uri.fsPath ??
    path.dirname(document.uri.fsPath);
  await runSaffron(root, ['run', relativeToRoot(root, document.uri.fsPath)]);
}

// ---------------------------------------------------------------------------------------------
// saffron.reviewProposal: the committed recording beside the proposed one, then Accept / Reject.

class ProposalDocuments implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  set(uri: vscode.Uri, text: string): void {
    this.contents.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '';
  }

  dispose(): void {
    this.changed.dispose();
  }
}

const proposalDocuments = new ProposalDocuments();

/** The proposal to review: the lens argument, or one picked from the open folders. */
async function chooseProposal(argument: unknown): Promise<{ root: string; relative: string } | undefined> {
  if (typeof argument === 'string' && argument.length > 0) {
    const root = rootFor(argument);
    return root === undefined ? undefined : { root, relative: argument };
  }
  const files = await vscode.workspace.findFiles('**/.saffron/proposals/**/*.json', '**/node_modules/**', 500);
  const items = files.flatMap((uri) => {
    const marker = `${path.sep}.saffron${path.sep}proposals${path.sep}`;
    const index = uri.fsPath.lastIndexOf(marker);
    if (index < 0) {
      return [];
    }
    const root = uri.fsPath.slice(0, index);
    const relative = relativeToRoot(root, uri.fsPath);
    return [{ label: relative, description: vscode.workspace.asRelativePath(root), root, relative }];
  });
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Saffron: no proposal is waiting for review.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, { placeHolder: 'Proposal to review' });
  return picked === undefined ? undefined : { root: picked.root, relative: picked.relative };
}

async function reviewProposalCommand(argument?: unknown): Promise<void> {
  const chosen = await chooseProposal(argument);
  if (chosen === undefined) {
    return;
  }
  const { root, relative } = chosen;
  let proposal;
  let committedPath: string;
  try {
    const proposalPath = resolveInsideRoot(root, relative);
    if (!fs.existsSync(proposalPath)) {
      void vscode.window.showWarningMessage(
        `Saffron: ${relative} is gone; it was accepted or rejected already.`,
      );
      return;
    }
    proposal = parseProposal(await fs.promises.readFile(proposalPath, 'utf8'));
    committedPath = resolveInsideRoot(root, proposal.cachePath);
  } catch (error) {
    void vscode.window.showErrorMessage(`Saffron: cannot read the proposal ${relative}: ${errorMessage(error)}`);
    return;
  }

  const proposed = vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${relative}`, query: 'proposed' });
  proposalDocuments.set(proposed, proposal.proposedRecordingText);
  let committed: vscode.Uri;
  if (fs.existsSync(committedPath)) {
    committed = vscode.Uri.file(committedPath);
  } else {
    committed = vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${proposal.cachePath}`, query: 'none' });
    proposalDocuments.set(committed, '');
  }
  const name = proposal.scenario ?? proposal.cachePath;
  await vscode.commands.executeCommand('vscode.diff', committed, proposed, `${name}: committed ↔ proposed`, {
    preview: true,
  });

  const accept = 'Accept';
  const acceptWithEdits = 'Accept with feature edits';
  const reject = 'Reject';
  const choices = proposal.featureEdits.length > 0 ? [accept, acceptWithEdits, reject] : [accept, reject];
  const choice = await vscode.window.showInformationMessage(reviewPrompt(proposal), ...choices);
  if (choice === accept) {
    await decide(root, ['accept', relative]);
  } else if (choice === acceptWithEdits) {
    await decide(root, ['accept', '--with-feature-edit', relative]);
  } else if (choice === reject) {
    await decide(root, ['reject', relative]);
  }
}

/**
 * Runs `saffron accept` or `saffron reject` and says how it went: what was written, or why the
 * proposal was refused (a stale or unverified proposal is refused with its reason, exit 1). A
 * task would leave the answer in a terminal the person may not look at.
 */
async function decide(root: string, args: string[]): Promise<void> {
  const binary = resolveBinary();
  if (binary === undefined) {
    return;
  }
  log(`${binary} ${args.join(' ')} (in ${root})`);
  try {
    const stdout = await execFileText(binary, args, root);
    output?.append(stdout);
    const first = stdout.split(/\r?\n/).find((line) => line.trim().length > 0) ?? `saffron ${args[0]} done`;
    void vscode.window.showInformationMessage(`Saffron: ${first}`);
  } catch (error) {
    void vscode.window.showErrorMessage(`Saffron: ${errorMessage(error)}`, 'Show Output').then((item) => {
      if (item !== undefined) {
        output?.show();
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The Proposals and CI Runs views. Their rows are the CLI's JSON (`saffron proposals --format
// json`, `saffron runs --json`); Diff, Accept, Reject and Import call the CLI, which decides.

/** The project the views show: the first root with a saffron.toml or a .saffron folder. */
function viewRoot(): string | undefined {
  return candidateRoots()[0];
}

/**
 * `saffron ARGS` for its JSON: stdout even when the command exits 2, since a refusal or a
 * problem is JSON too; an error only when there is no output to read.
 */
function execJson(args: string[], cwd: string): Promise<string> {
  const binary = resolveBinary();
  if (binary === undefined) {
    return Promise.reject(new Error('the saffron binary was not found (saffron.path)'));
  }
  log(`${binary} ${args.join(' ')} (in ${cwd})`);
  return new Promise((resolve, reject) => {
    execFile(binary, args, { cwd, maxBuffer: 64 * 1024 * 1024, windowsHide: true, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (stderr.length > 0) {
        output?.append(stderr);
      }
      if (stdout.trim().length > 0) {
        resolve(stdout);
      } else {
        reject(new Error(error === null ? `saffron ${args[0]} printed nothing` : error.message));
      }
    });
  });
}

class ProposalsView implements vscode.TreeDataProvider<ProposalRow> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  view: vscode.TreeView<ProposalRow> | undefined;

  refresh(): void {
    this.changed.fire();
  }

  getTreeItem(row: ProposalRow): vscode.TreeItem {
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.contextValue = row.contextValue;
    item.command = { command: 'saffron.proposals.diff', title: 'Diff', arguments: [row] };
    return item;
  }

  async getChildren(): Promise<ProposalRow[]> {
    const root = viewRoot();
    if (root === undefined) {
      return [];
    }
    try {
      const rows = proposalRows(await execJson(['proposals', '--format', 'json'], root));
      this.setMessage(rows.length === 0 ? 'No proposal is waiting for review.' : undefined);
      return rows;
    } catch (error) {
      this.setMessage(`saffron proposals: ${errorMessage(error)}`);
      return [];
    }
  }

  private setMessage(message: string | undefined): void {
    if (this.view !== undefined) {
      this.view.message = message;
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}

type RunNode = { kind: 'run'; row: RunRow } | { kind: 'line'; text: string };

class RunsView implements vscode.TreeDataProvider<RunNode> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  /** What the last import of each run did, shown under it. */
  readonly imported = new Map<string, string[]>();
  view: vscode.TreeView<RunNode> | undefined;
  /** Runs load when the view opens and on Refresh: GitHub rate-limits, a run list is no feed. */
  private loaded: RunRow[] | undefined;

  refresh(): void {
    this.loaded = undefined;
    this.changed.fire();
  }

  redraw(): void {
    this.changed.fire();
  }

  getTreeItem(node: RunNode): vscode.TreeItem {
    if (node.kind === 'line') {
      return new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
    }
    const lines = this.imported.get(node.row.id);
    const item = new vscode.TreeItem(
      node.row.label,
      lines === undefined ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Expanded,
    );
    item.description = node.row.description;
    item.tooltip = node.row.tooltip;
    item.contextValue = 'run';
    return item;
  }

  async getChildren(node?: RunNode): Promise<RunNode[]> {
    if (node !== undefined) {
      return node.kind === 'run' ? (this.imported.get(node.row.id) ?? []).map((text) => ({ kind: 'line', text })) : [];
    }
    const root = viewRoot();
    if (root === undefined) {
      return [];
    }
    if (this.loaded === undefined) {
      try {
        const listed = runRows(await execJson(['runs', '--json'], root));
        if ('problem' in listed) {
          this.setMessage(listed.problem.message);
          return [];
        }
        this.loaded = listed.runs;
        this.setMessage(listed.runs.length === 0 ? 'No CI run of this branch.' : undefined);
      } catch (error) {
        this.setMessage(`saffron runs: ${errorMessage(error)}`);
        return [];
      }
    }
    return this.loaded.map((row) => ({ kind: 'run', row }));
  }

  private setMessage(message: string | undefined): void {
    if (this.view !== undefined) {
      this.view.message = message;
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}

const proposalsView = new ProposalsView();
const runsView = new RunsView();
/** The views, for the extension's tests. */
export const views = { proposals: proposalsView, runs: runsView };

async function decideProposal(verb: 'accept' | 'reject', row: unknown): Promise<void> {
  const root = viewRoot();
  const id = typeof row === 'object' && row !== null && 'id' in row ? String((row as ProposalRow).id) : undefined;
  if (root === undefined || id === undefined || id.length === 0) {
    return;
  }
  await decide(root, [verb, id]);
  proposalsView.refresh();
}

async function diffProposal(row: unknown): Promise<void> {
  const relative = typeof row === 'object' && row !== null && 'path' in row ? String((row as ProposalRow).path) : undefined;
  await reviewProposalCommand(relative);
  proposalsView.refresh();
}

async function importRun(node: unknown): Promise<void> {
  const root = viewRoot();
  const row = typeof node === 'object' && node !== null && 'row' in node ? (node as { row: RunRow }).row : undefined;
  if (root === undefined || row === undefined) {
    return;
  }
  try {
    const outcome = importLines(await execJson(['import', '--run', row.id, '--json'], root));
    runsView.imported.set(row.id, outcome.lines);
    if (outcome.failed) {
      void vscode.window.showErrorMessage(`Saffron: ${outcome.lines[0] ?? 'the import was refused'}`);
    }
  } catch (error) {
    runsView.imported.set(row.id, [`failed: ${errorMessage(error)}`]);
  }
  runsView.redraw();
  proposalsView.refresh();
}

async function openRun(node: unknown): Promise<void> {
  const link = typeof node === 'object' && node !== null && 'row' in node ? (node as { row: RunRow }).row.link : undefined;
  if (link !== undefined && /^https?:\/\//.test(link)) {
    await vscode.env.openExternal(vscode.Uri.parse(link));
  }
}

// ---------------------------------------------------------------------------------------------
// Saffron: Refresh step snippets

async function pickFolder(): Promise<vscode.WorkspaceFolder | undefined> {
  const document = vscode.window.activeTextEditor?.document;
  const active = document === undefined ? undefined : vscode.workspace.getWorkspaceFolder(document.uri);
  if (active !== undefined) {
    return active;
  }
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length <= 1) {
    return folders[0];
  }
  return vscode.window.showWorkspaceFolderPick({ placeHolder: 'Folder to write step snippets for' });
}

function execFileText(binary: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      binary,
      args,
      { cwd, maxBuffer: 256 * 1024 * 1024, windowsHide: true, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error !== null) {
          const firstLine = stderr.split(/\r?\n/).find((line) => line.trim().length > 0);
          const code = typeof error.code === 'number' ? `exit code ${error.code}` : error.message;
          if (stderr.length > 0) {
            output?.append(stderr);
          }
          reject(new Error(firstLine === undefined ? code : `${firstLine} (${code})`));
          return;
        }
        resolve(stdout);
      },
    );
  });
}

async function refreshSnippetsCommand(): Promise<void> {
  const folder = await pickFolder();
  if (folder === undefined) {
    void vscode.window.showErrorMessage('Saffron: open a folder to write step snippets for.');
    return;
  }
  const binary = resolveBinary();
  if (binary === undefined) {
    return;
  }
  const args = ['steps', '--format', 'snippets'];
  log(`${binary} ${args.join(' ')} (in ${folder.uri.fsPath})`);
  try {
    const prepared = prepareSnippets(await execFileText(binary, args, folder.uri.fsPath));
    const directory = vscode.Uri.joinPath(folder.uri, '.vscode');
    const target = vscode.Uri.joinPath(directory, 'saffron.code-snippets');
    await vscode.workspace.fs.createDirectory(directory);
    await vscode.workspace.fs.writeFile(target, Buffer.from(prepared.text, 'utf8'));
    log(`wrote ${prepared.count} snippets to ${target.fsPath}`);
    const open = await vscode.window.showInformationMessage(
      `Saffron: wrote ${prepared.count} step snippet${prepared.count === 1 ? '' : 's'} to .vscode/saffron.code-snippets.`,
      'Open',
    );
    if (open !== undefined) {
      await vscode.window.showTextDocument(target);
    }
  } catch (error) {
    log(`refreshing snippets: ${errorMessage(error)}`);
    void vscode.window.showErrorMessage(`Saffron: saffron steps failed: ${errorMessage(error)}`);
  }
}

// ---------------------------------------------------------------------------------------------

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('Saffron', { log: true });
  server = new ServerManager(output);
  const manager = server;
  const channel = output;
  context.subscriptions.push(
    channel,
    manager,
    proposalDocuments,
    vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, proposalDocuments),
    vscode.tasks.registerTaskProvider(TASK_TYPE, new SaffronTaskProvider()),
    vscode.commands.registerCommand('saffron.run', runScenarioCommand),
    vscode.commands.registerCommand('saffron.runFeature', runFeatureCommand),
    vscode.commands.registerCommand('saffron.reviewProposal', reviewProposalCommand),
    vscode.commands.registerCommand('saffron.refreshSnippets', refreshSnippetsCommand),
    vscode.commands.registerCommand('saffron.restartServer', () => manager.restart()),
    vscode.commands.registerCommand('saffron.showOutput', () => channel.show(true)),
    proposalsView,
    runsView,
    vscode.commands.registerCommand('saffron.proposals.refresh', () => proposalsView.refresh()),
    vscode.commands.registerCommand('saffron.proposals.diff', diffProposal),
    vscode.commands.registerCommand('saffron.proposals.accept', (row: unknown) => decideProposal('accept', row)),
    vscode.commands.registerCommand('saffron.proposals.reject', (row: unknown) => decideProposal('reject', row)),
    vscode.commands.registerCommand('saffron.runs.refresh', () => runsView.refresh()),
    vscode.commands.registerCommand('saffron.runs.import', importRun),
    vscode.commands.registerCommand('saffron.runs.open', openRun),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('saffron.path')) {
        log('saffron.path changed: restarting the language server');
        void manager.restart();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      log('workspace trusted: restarting the language server with the workspace settings');
      void manager.restart();
    }),
  );
  proposalsView.view = vscode.window.createTreeView('saffron.proposals', { treeDataProvider: proposalsView });
  runsView.view = vscode.window.createTreeView('saffron.ciRuns', { treeDataProvider: runsView });
  context.subscriptions.push(proposalsView.view, runsView.view);
  await manager.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
