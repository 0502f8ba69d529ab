// Reading a proposal file (.saffron/proposals/<feature>/<scenario>.json) for review: what the
// diff needs and what the reviewer is told. The full format is docs/recording-format.md; the
// CLI's validator is the authority, so this reads only the fields the review uses and names
// the first one that is missing. No `vscode` import.

export interface FeatureEdit {
  file: string;
  line: number;
  before: string;
  after: string;
}

export interface ProposalForReview {
  /** The committed recording's path, relative to the project root. */
  cachePath: string;
  feature: string | undefined;
  scenario: string | undefined;
  /** The proposed recording, pretty-printed like the files in .saffron/cache. */
  proposedRecordingText: string;
  narrative: string | undefined;
  featureEdits: FeatureEdit[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

export function parseProposal(text: string): ProposalForReview {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isObject(json)) {
    throw new Error('a proposal is a JSON object');
  }
  const scenario = json.scenario;
  if (!isObject(scenario)) {
    throw new Error('missing "scenario"');
  }
  const cachePath = scenario.cachePath;
  if (typeof cachePath !== 'string' || cachePath.length === 0) {
    throw new Error('missing "scenario.cachePath"');
  }
  const recording = json.recording;
  if (!isObject(recording)) {
    throw new Error('missing "recording"');
  }
  const featureEdits: FeatureEdit[] = [];
  if (Array.isArray(json.featureEdits)) {
    for (const edit of json.featureEdits) {
      if (
        isObject(edit) &&
        typeof edit.file === 'string' &&
        typeof edit.line === 'number' &&
        typeof edit.before === 'string' &&
        typeof edit.after === 'string'
      ) {
        featureEdits.push({ file: edit.file, line: edit.line, before: edit.before, after: edit.after });
      }
    }
  }
  return {
    cachePath,
    feature: optionalString(scenario.feature),
    scenario: optionalString(scenario.name),
    proposedRecordingText: `${JSON.stringify(recording, null, 2)}\n`,
    narrative: optionalString(json.narrative),
    featureEdits,
  };
}

/** One line for the accept/reject prompt. */
export function reviewPrompt(proposal: ProposalForReview): string {
  const name = proposal.scenario ?? proposal.cachePath;
  const parts = [`Proposal for "${name}"`];
  if (proposal.narrative !== undefined) {
    parts.push(proposal.narrative);
  }
  if (proposal.featureEdits.length > 0) {
    const count = proposal.featureEdits.length;
    parts.push(`It also proposes ${count} feature-file edit${count === 1 ? '' : 's'}.`);
  }
  return parts.join(' — ');
}
