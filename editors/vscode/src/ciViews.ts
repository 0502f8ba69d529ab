// What the Proposals and CI Runs views show, read from the CLI's JSON: `saffron proposals
// --format json`, `saffron runs --json` and `saffron import --run ID --json`. The CLI decides
// everything (staleness, where a proposal came from, what an import did); this only arranges it
// into rows. No `vscode` import.

export interface ProposalRow {
  /** The id `saffron diff`, `accept` and `reject` take. */
  id: string;
  /** The proposal file, relative to the project root. */
  path: string;
  label: string;
  description: string;
  tooltip: string;
  /** `proposal` (acceptable), `proposal-held` (stale, unverified, refused, a different control). */
  contextValue: 'proposal' | 'proposal-held';
}

export interface RunRow {
  id: string;
  label: string;
  description: string;
  tooltip: string;
  link: string | undefined;
  /** Proposals from this run still pending here. */
  pending: string[];
}

export interface Problem {
  kind: string;
  message: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function parse(json: string, what: string): unknown {
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new Error(`${what} answered what is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Where a proposal came from, in words: `CI run 4242`, or the bundle's name. */
function importedFrom(value: unknown): string | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const run = value.run;
  if (isObject(run) && typeof run.id === 'string') {
    return `CI run ${run.id}`;
  }
  return text(value.bundle) || undefined;
}

/** The rows of the Proposals view, from `saffron proposals --format json`. */
export function proposalRows(json: string): ProposalRow[] {
  const value = parse(json, 'saffron proposals');
  if (!isObject(value) || !Array.isArray(value.proposals)) {
    throw new Error('saffron proposals answered without a "proposals" list');
  }
  return value.proposals.filter(isObject).map((proposal) => {
    const flags: string[] = [];
    if (proposal.stale === true) {
      flags.push('STALE');
    } else if (typeof proposal.unverified === 'string') {
      flags.push('UNVERIFIED');
    } else if (strings(proposal.refused).length > 0) {
      flags.push('REFUSED');
    } else if (strings(proposal.differentControls).length > 0) {
      flags.push('DIFFERENT CONTROL');
    }
    const from = importedFrom(proposal.importedFrom);
    const reasons = [
      ...strings(proposal.staleReasons),
      ...(typeof proposal.unverified === 'string' ? [`unverified: ${proposal.unverified}`] : []),
      ...strings(proposal.refused),
      ...strings(proposal.differentControls).map((change) => `different control: ${change}`),
    ];
    const tooltip = [
      `${text(proposal.feature)} / "${text(proposal.scenario)}"`,
      text(proposal.narrative),
      from === undefined ? '' : `from ${from}`,
      ...reasons,
    ]
      .filter((line) => line.length > 0)
      .join('\n');
    return {
      id: text(proposal.id),
      path: text(proposal.path),
      label: text(proposal.scenario) || text(proposal.path),
      description: [text(proposal.feature), ...flags, ...(from === undefined ? [] : [`from ${from}`])].join(' · '),
      tooltip,
      contextValue: proposal.acceptable === true ? 'proposal' : 'proposal-held',
    };
  });
}

/** The rows of the CI Runs view, from `saffron runs --json`, or the problem it reported. */
export function runRows(json: string): { runs: RunRow[] } | { problem: Problem } {
  const value = parse(json, 'saffron runs');
  if (isObject(value) && isObject(value.problem)) {
    return { problem: { kind: text(value.problem.kind), message: text(value.problem.message) } };
  }
  if (isObject(value) && typeof value.error === 'string') {
    return { problem: { kind: 'error', message: value.error } };
  }
  if (!isObject(value) || !Array.isArray(value.runs)) {
    throw new Error('saffron runs answered without a "runs" list');
  }
  return {
    runs: value.runs.filter(isObject).map((run) => {
      const outcome = text(run.conclusion) || text(run.status);
      const pending = strings(run.pending);
      const number = typeof run.number === 'number' ? ` #${run.number}` : '';
      return {
        id: text(run.id),
        label: `${text(run.name)}${number}`,
        description: [outcome, text(run.event), text(run.commit).slice(0, 7), pending.length > 0 ? `${pending.length} pending` : '']
          .filter((part) => part.length > 0)
          .join(' · '),
        tooltip: [`run ${text(run.id)} on ${text(run.branch)}`, text(run.link), ...pending].filter((l) => l.length > 0).join('\n'),
        link: text(run.link) || undefined,
        pending,
      };
    }),
  };
}

/** What `saffron import --run ID --json` did, one line each, or its refusal. */
export function importLines(json: string): { lines: string[]; failed: boolean } {
  const value = parse(json, 'saffron import');
  if (isObject(value) && typeof value.error === 'string') {
    const hint = text(value.hint);
    return { lines: [`refused: ${value.error}`, ...(hint ? [`hint: ${hint}`] : [])], failed: true };
  }
  if (!isObject(value)) {
    throw new Error('saffron import answered what is not an object');
  }
  const lines: string[] = [];
  for (const warning of strings(value.warnings)) {
    lines.push(`warning: ${warning}`);
  }
  for (const proposal of Array.isArray(value.proposals) ? value.proposals.filter(isObject) : []) {
    const reasons = strings(proposal.reasons);
    lines.push(`${text(proposal.outcome)}: ${text(proposal.path)}${reasons.length > 0 ? ` (${reasons.join('; ')})` : ''}`);
  }
  if (value.changed === false) {
    lines.push('nothing changed: imported before');
  }
  if (lines.length === 0) {
    lines.push('no proposal in the run\'s bundles');
  }
  return { lines, failed: false };
}
