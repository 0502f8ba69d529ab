// A stand-in for the `vscode` module, enough to load the bundled extension under plain Node and
// drive its commands: it records registered commands, executed tasks, shown messages, written
// files and executed VS Code commands. What the extension does not touch is a permissive
// placeholder (so vscode-languageclient can define its classes at load time); the language
// client itself is never started here.

import * as path from 'node:path';

export interface Recorded {
  commands: Map<string, (...args: unknown[]) => unknown>;
  tasks: { name: string; process: string; args: string[]; cwd: string | undefined }[];
  messages: { level: 'info' | 'warning' | 'error'; text: string; items: string[] }[];
  executed: { command: string; args: unknown[] }[];
  written: Map<string, string>;
  providers: Map<string, { provideTextDocumentContent(uri: unknown): string }>;
  log: string[];
}

export interface FakeOptions {
  workspaceFolders: string[];
  settings: Record<string, unknown>;
  /** The button a message answers with, by message level; undefined dismisses it. */
  answer?: (level: 'info' | 'warning' | 'error', text: string, items: string[]) => string | undefined;
  activeFile?: string;
}

/** Anything: callable, constructible, extendable, with any property. */
function permissive(name: string): unknown {
  const cache = new Map<PropertyKey, unknown>();
  const target = function () {
    /* placeholder */
  } as unknown as { prototype: object };
  return new Proxy(target, {
    get(object, property) {
      if (property === 'prototype') {
        return object.prototype;
      }
      if (property === Symbol.toPrimitive || property === 'then') {
        return undefined;
      }
      if (!cache.has(property)) {
        cache.set(property, permissive(`${name}.${String(property)}`));
      }
      return cache.get(property);
    },
    apply() {
      return permissive(`${name}()`);
    },
    construct() {
      return permissive(`new ${name}`) as object;
    },
  });
}

class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly query: string,
  ) {}

  static file(fsPath: string): Uri {
    return new Uri('file', path.resolve(fsPath), '');
  }

  static from(components: { scheme: string; path?: string; query?: string }): Uri {
    return new Uri(components.scheme, components.path ?? '', components.query ?? '');
  }

  static joinPath(base: Uri, ...segments: string[]): Uri {
    return new Uri(base.scheme, path.join(base.path, ...segments), base.query);
  }

  get fsPath(): string {
    return this.path;
  }

  toString(): string {
    return `${this.scheme}://${this.path}${this.query === '' ? '' : `?${this.query}`}`;
  }
}

class EventEmitter<T> {
  private readonly listeners: ((value: T) => void)[] = [];
  readonly event = (listener: (value: T) => void): { dispose(): void } => {
    this.listeners.push(listener);
    return { dispose: () => undefined };
  };

  fire(value: T): void {
    for (const listener of this.listeners) {
      listener(value);
    }
  }

  dispose(): void {
    this.listeners.length = 0;
  }
}

class ProcessExecution {
  constructor(
    readonly process: string,
    readonly args: string[],
    readonly options?: { cwd?: string },
  ) {}
}

class Task {
  presentationOptions: unknown;
  constructor(
    readonly definition: { type: string },
    readonly scope: unknown,
    readonly name: string,
    readonly source: string,
    readonly execution: ProcessExecution,
    readonly problemMatchers: string[],
  ) {}
}

export function createFakeVscode(options: FakeOptions): { module: unknown; recorded: Recorded } {
  const recorded: Recorded = {
    commands: new Map(),
    tasks: [],
    messages: [],
    executed: [],
    written: new Map(),
    providers: new Map(),
    log: [],
  };
  const disposable = { dispose: () => undefined };
  const folders = options.workspaceFolders.map((folder, index) => ({
    uri: Uri.file(folder),
    name: path.basename(folder),
    index,
  }));
  const message =
    (level: 'info' | 'warning' | 'error') =>
    (text: string, ...items: unknown[]): Promise<string | undefined> => {
      const labels = items.filter((item): item is string => typeof item === 'string');
      recorded.messages.push({ level, text, items: labels });
      return Promise.resolve(options.answer?.(level, text, labels));
    };
  const channel = {
    info: (text: string) => recorded.log.push(text),
    warn: (text: string) => recorded.log.push(text),
    error: (text: string) => recorded.log.push(text),
    debug: (text: string) => recorded.log.push(text),
    trace: (text: string) => recorded.log.push(text),
    append: (text: string) => recorded.log.push(text),
    appendLine: (text: string) => recorded.log.push(text),
    show: () => undefined,
    dispose: () => undefined,
  };
  const activeEditor =
    options.activeFile === undefined
      ? undefined
      : {
          document: { uri: Uri.file(options.activeFile), lineAt: () => ({ text: '' }) },
          selection: { active: { line: 0 } },
        };

  const api: Record<string, unknown> = {
    Uri,
    EventEmitter,
    ProcessExecution,
    Task,
    TaskScope: { Global: 1, Workspace: 2 },
    TaskRevealKind: { Always: 1, Silent: 2, Never: 3 },
    TaskPanelKind: { Shared: 1, Dedicated: 2, New: 3 },
    Disposable: class {
      static from(): { dispose(): void } {
        return disposable;
      }
      dispose(): void {
        /* nothing */
      }
    },
    window: {
      createOutputChannel: () => channel,
      showErrorMessage: message('error'),
      showWarningMessage: message('warning'),
      showInformationMessage: message('info'),
      showQuickPick: () => Promise.resolve(undefined),
      showWorkspaceFolderPick: () => Promise.resolve(folders[0]),
      showTextDocument: () => Promise.resolve(undefined),
      activeTextEditor: activeEditor,
      // A tree view: the message it shows, and nothing to dispose.
      createTreeView: () => ({ message: undefined as string | undefined, dispose: () => undefined }),
    },
    workspace: {
      workspaceFolders: folders,
      getConfiguration: (section: string) => ({
        get: (key: string, fallback?: unknown) => options.settings[`${section}.${key}`] ?? fallback,
      }),
      getWorkspaceFolder: (uri: Uri) =>
        folders.find((folder) => uri.fsPath === folder.uri.fsPath || uri.fsPath.startsWith(folder.uri.fsPath + path.sep)),
      registerTextDocumentContentProvider: (
        scheme: string,
        provider: { provideTextDocumentContent(uri: unknown): string },
      ) => {
        recorded.providers.set(scheme, provider);
        return disposable;
      },
      onDidChangeConfiguration: () => disposable,
      onDidGrantWorkspaceTrust: () => disposable,
      createFileSystemWatcher: () => disposable,
      findFiles: () => Promise.resolve([]),
      asRelativePath: (value: string) => value,
      fs: {
        createDirectory: () => Promise.resolve(),
        writeFile: (uri: Uri, content: Uint8Array) => {
          recorded.written.set(uri.fsPath, Buffer.from(content).toString('utf8'));
          return Promise.resolve();
        },
      },
    },
    commands: {
      registerCommand: (id: string, handler: (...args: unknown[]) => unknown) => {
        recorded.commands.set(id, handler);
        return disposable;
      },
      executeCommand: (command: string, ...args: unknown[]) => {
        recorded.executed.push({ command, args });
        return Promise.resolve(undefined);
      },
    },
    tasks: {
      registerTaskProvider: () => disposable,
      executeTask: (task: Task) => {
        recorded.tasks.push({
          name: task.name,
          process: task.execution.process,
          args: task.execution.args,
          cwd: task.execution.options?.cwd,
        });
        return Promise.resolve(undefined);
      },
    },
  };
  const module = new Proxy(api, {
    get(object, property: string) {
      if (!(property in object)) {
        object[property] = permissive(`vscode.${property}`);
      }
      return object[property];
    },
  });
  return { module, recorded };
}
