// Finding the `saffron` binary the way a shell would, so a missing binary is reported by name
// before anything is spawned. No `vscode` import: unit-tested under plain Node.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface ResolveOptions {
  /** The first workspace folder, for `${workspaceFolder}` and relative paths. */
  workspaceFolder?: string;
  /** PATH and PATHEXT; the process environment by default. */
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}

/**
 * Expands `${workspaceFolder}`, `${userHome}` and a leading `~` in the configured path, and
 * makes a relative path that names a folder (`./target/debug/saffron`) absolute against the
 * workspace folder. A bare command name (`saffron`) is left for {@link findExecutable}.
 */
export function expandConfiguredPath(configured: string, options: ResolveOptions = {}): string {
  let value = configured.trim();
  const home = os.homedir();
  if (value.includes('${workspaceFolder}')) {
    if (options.workspaceFolder === undefined) {
      throw new Error(`"${configured}" uses \${workspaceFolder}, but no folder is open`);
    }
    value = value.split('${workspaceFolder}').join(options.workspaceFolder);
  }
  value = value.split('${userHome}').join(home);
  if (value === '~' || value.startsWith('~/') || value.startsWith('~\\')) {
    value = path.join(home, value.slice(1));
  }
  const hasSeparator = value.includes('/') || value.includes('\\');
  if (hasSeparator && !path.isAbsolute(value) && options.workspaceFolder !== undefined) {
    value = path.resolve(options.workspaceFolder, value);
  }
  return value;
}

function isExecutableFile(candidate: string, platform: NodeJS.Platform): boolean {
  try {
    const stat = fs.statSync(candidate);
    if (!stat.isFile()) {
      return false;
    }
    if (platform === 'win32') {
      return true;
    }
    fs.accessSync(candidate, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The absolute path of the executable `command` names, or undefined when there is none: a path
 * is checked as it is, a bare name is looked up on PATH (with PATHEXT on Windows).
 */
export function findExecutable(command: string, options: ResolveOptions = {}): string | undefined {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const extensions =
    platform === 'win32'
      ? ['', ...(env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter((e) => e.length > 0)]
      : [''];
  const expanded = expandConfiguredPath(command, options);
  if (expanded.includes('/') || expanded.includes('\\')) {
    for (const extension of extensions) {
      if (isExecutableFile(expanded + extension, platform)) {
        return expanded + extension;
      }
    }
    return undefined;
  }
  const pathVariable = env.PATH ?? env.Path ?? '';
  const delimiter = platform === 'win32' ? ';' : ':';
  for (const directory of pathVariable.split(delimiter)) {
    if (directory.length === 0) {
      continue;
    }
    for (const extension of extensions) {
      const candidate = path.join(directory, expanded + extension);
      if (isExecutableFile(candidate, platform)) {
        return candidate;
      }
    }
  }
  return undefined;
}
