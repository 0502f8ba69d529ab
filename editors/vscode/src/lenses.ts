// Choosing the code lens that "run the scenario at the cursor" means, from the lenses the
// server sent for the document. No `vscode` import.

export interface LensLike {
  /** Zero-based line of the lens. */
  line: number;
  command: string;
  arguments: readonly unknown[];
}

/**
 * The `saffron.run` lens of the scenario the cursor is in: the last one that starts at or
 * above `cursorLine` (zero-based); undefined when the cursor is above every scenario.
 */
export function scenarioLensAt(lenses: readonly LensLike[], cursorLine: number): LensLike | undefined {
  const runs = lenses.filter((lens) => lens.command === 'saffron.run').sort((a, b) => a.line - b.line);
  let chosen: LensLike | undefined;
  for (const lens of runs) {
    if (lens.line <= cursorLine) {
      chosen = lens;
    }
  }
  return chosen;
}

/** The first string argument of a lens command, which is all Saffron's commands take. */
export function firstStringArgument(args: readonly unknown[] | undefined): string | undefined {
  const first = args?.[0];
  return typeof first === 'string' && first.length > 0 ? first : undefined;
}
