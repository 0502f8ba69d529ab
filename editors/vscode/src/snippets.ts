// `saffron steps --format snippets` prints a VS Code snippets object. Written to
// .vscode/saffron.code-snippets as it is, a project snippet without a `scope` shows up in every
// language, so each entry is scoped to the two Saffron languages unless it names its own scope.
// No `vscode` import.

export const SNIPPET_SCOPE = 'gherkin,saffron';

export interface PreparedSnippets {
  text: string;
  count: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function prepareSnippets(stdout: string): PreparedSnippets {
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch (error) {
    throw new Error(
      `saffron steps --format snippets did not print JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!isObject(json)) {
    throw new Error('saffron steps --format snippets did not print a JSON object');
  }
  const scoped: Record<string, unknown> = {};
  let count = 0;
  for (const [name, entry] of Object.entries(json)) {
    if (!isObject(entry) || entry.body === undefined || entry.prefix === undefined) {
      throw new Error(`snippet "${name}" has no body or prefix`);
    }
    scoped[name] = entry.scope === undefined ? { scope: SNIPPET_SCOPE, ...entry } : entry;
    count += 1;
  }
  return { text: `${JSON.stringify(scoped, null, 2)}\n`, count };
}
