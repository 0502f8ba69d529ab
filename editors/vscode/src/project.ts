// The Saffron project a file belongs to, and paths relative to it. Code lens arguments are
// relative to the project root (the nearest folder holding `saffron.toml` or `.saffron/`, the
// rule `saffron` itself follows), so the client has to find the same root. No `vscode` import.

import * as fs from 'node:fs';
import * as path from 'node:path';

export const ROOT_MARKERS = ['saffron.toml', '.saffron'] as const;

/**
 * The nearest folder at or above `start` (a file or a folder) that holds a root marker, not
 * going above `ceiling` when one is given; undefined when there is none.
 */
export function findProjectRoot(start: string, ceiling?: string): string | undefined {
  let directory = path.resolve(start);
  try {
    if (!fs.statSync(directory).isDirectory()) {
      directory = path.dirname(directory);
    }
  } catch {
    directory = path.dirname(directory);
  }
  const stop = ceiling === undefined ? undefined : path.resolve(ceiling);
  for (;;) {
    for (const marker of ROOT_MARKERS) {
      if (fs.existsSync(path.join(directory, marker))) {
        return directory;
      }
    }
    if (stop !== undefined && directory === stop) {
      return undefined;
    }
    const parent = path.dirname(directory);
    if (parent === directory) {
      return undefined;
    }
    directory = parent;
  }
}

/**
 * Resolves a project-relative path (forward slashes, as the server and the CLI write them)
 * against `root`, refusing absolute paths and paths that climb out of the root.
 */
export function resolveInsideRoot(root: string, relative: string): string {
  if (relative.length === 0) {
    throw new Error('empty path');
  }
  if (path.isAbsolute(relative) || /^[A-Za-z]:[\\/]/.test(relative)) {
    throw new Error(`"${relative}" is not relative to the project root`);
  }
  const resolved = path.resolve(root, ...relative.split('/'));
  const fromRoot = path.relative(root, resolved);
  if (fromRoot.startsWith('..') || path.isAbsolute(fromRoot)) {
    throw new Error(`"${relative}" points outside the project root`);
  }
  return resolved;
}

/** `file` relative to `root`, with forward slashes, as `saffron run` takes it. */
export function relativeToRoot(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}

/**
 * Splits a `saffron.run` argument `path:line` into its parts; the path may itself hold colons
 * (a Windows drive never appears: arguments are project-relative).
 */
export function splitScenarioArgument(argument: string): { file: string; line: number } | undefined {
  const match = /^(.*):(\d+)$/.exec(argument);
  if (match === null || match[1] === undefined || match[2] === undefined || match[1].length === 0) {
    return undefined;
  }
  const line = Number.parseInt(match[2], 10);
  return line >= 1 ? { file: match[1], line } : undefined;
}
