//! Drafting a feature file from prose in the project's own vocabulary (`saffron author`, the
//! MCP tool `author_feature`, the editor's command).
//!
//! One plain model call, no tools: the model gets the rules, the project's vocabulary chosen by
//! relevance ([`vocabulary`]) and the prose, and answers with a file. The draft is then parsed
//! with the project's parser; a draft that does not parse gets one repair call with the
//! parser's errors, then fails with them. Every step of the draft that is a near-duplicate of a
//! step the project already writes (the index's definition), or a paraphrase of a recorded step
//! or StepSet ([`paraphrase`]), is rewritten to that wording mechanically, with no model call,
//! and each step is priced: it replays for free, or it needs
//! recording. Nothing here writes a file or knows a terminal, LSP or MCP.

pub mod paraphrase;
pub mod vocabulary;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use saffron_agent::{AgentSetup, Block, HttpSettings, Message, Prices, Provider, ProviderError, Request, Usage};
use saffron_index::tokens::pattern_key;
use saffron_index::{BLOCK_START, Change, Snapshot, StepRole, StepStatus, step_blocks, step_specs};
use saffron_recording::{Masker, Secret, TokenKind, tokenize};
use saffron_syntax::{Severity, SourceKind, pickles, step_sets};
use schemars::JsonSchema;
use serde::Serialize;

use crate::orchestrator::run::EnvLookup;
use crate::seed::{self, SeedSources};

pub use paraphrase::Paraphrased;
pub use vocabulary::{Vocabulary, VocabularySet, VocabularyStep};

/// The vocabulary's share of the prompt, in tokens, unless the caller says otherwise.
pub const DEFAULT_VOCABULARY_BUDGET: usize = 6_000;

/// The longest answer asked for: a feature file of a few scenarios.
const MAX_ANSWER_TOKENS: u32 = 4_096;

/// What to draft.
#[derive(Debug, Clone)]
pub struct AuthorRequest {
    pub prose: String,
    /// Where the draft would be saved, relative to the project root: its extension decides the
    /// dialect (`.saffron` allows StepSets, `.feature` is plain Gherkin).
    pub path: PathBuf,
    /// Tokens the vocabulary may take in the prompt.
    pub vocabulary_budget: usize,
}

/// What a drafted step costs on the first run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StepCost {
    /// Recorded elsewhere with one meaning: replays for free.
    Free,
    /// Recorded with different actions in different scenarios: reused, ambiguously.
    Divergent,
    /// Recorded nowhere: an agent records it on the first run.
    NeedsRecording,
}

impl StepCost {
    pub fn as_str(self) -> &'static str {
        match self {
            StepCost::Free => "free",
            StepCost::Divergent => "divergent",
            StepCost::NeedsRecording => "needs recording",
        }
    }

    fn of(status: StepStatus) -> StepCost {
        match status {
            StepStatus::Recorded => StepCost::Free,
            StepStatus::Divergent => StepCost::Divergent,
            StepStatus::Unrecorded => StepCost::NeedsRecording,
        }
    }
}

/// One step the draft runs, in file order; a `StepSet` invocation gives one per step of the set.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DraftedStep {
    /// 1-based line in the draft (the invocation's line for a set's step).
    pub line: u32,
    /// As written, trailing space included.
    pub keyword: String,
    pub text: String,
    pub cost: StepCost,
    /// The model's wording, when it was a near-duplicate or a paraphrase rewritten to the
    /// project's (for a set's steps, said on the first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewritten_from: Option<String>,
    /// The set this step runs in, for a `StepSet` invocation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_set: Option<String>,
    /// For a step that needs recording: the recorded step sharing the most words with it, a
    /// suggestion for a person when no step of the project says the same without doubt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closest_recorded: Option<String>,
}

/// Distinct step texts the draft runs, by cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DraftTotals {
    pub distinct_steps: usize,
    pub free: usize,
    pub divergent: usize,
    pub needs_recording: usize,
    pub rewritten: usize,
}

impl DraftTotals {
    /// `7 distinct steps: 6 replay for free, 0 divergent, 1 needs recording; 2 rewritten to the
    /// project's wording`.
    pub fn summary(&self) -> String {
        format!(
            "{} distinct step(s): {} replay for free, {} divergent, {} need recording; {} rewritten to the project's wording",
            self.distinct_steps, self.free, self.divergent, self.needs_recording, self.rewritten
        )
    }
}

/// A draft that parses, in the project's wording, priced.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Draft {
    pub path: PathBuf,
    pub text: String,
    pub steps: Vec<DraftedStep>,
    pub totals: DraftTotals,
    /// Whether the first answer did not parse and the repair call's did.
    pub repaired: bool,
    /// Items of the vocabulary given to the model, and left out by the budget.
    pub vocabulary_items: usize,
    pub vocabulary_left_out: usize,
}

/// A parser error of a draft: `line:column: message (hint)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftError {
    pub line: u32,
    pub column: u32,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl std::fmt::Display for DraftError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " (hint: {hint})")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AuthorError {
    #[error("{0}")]
    Provider(#[from] ProviderError),
    #[error("the model answered without a feature file")]
    EmptyAnswer,
    /// The answer and the repair's did not parse; the errors are the repair's.
    #[error("the drafted feature does not parse after one repair round: {}", join_errors(.errors))]
    Unparseable { text: String, errors: Vec<DraftError> },
}

fn join_errors(errors: &[DraftError]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

impl AuthorError {
    pub fn hint(&self) -> String {
        match self {
            AuthorError::Provider(error) => error.hint(),
            AuthorError::EmptyAnswer => "run it again, or describe the behaviour in more detail".into(),
            AuthorError::Unparseable { .. } => {
                "run it again, or write the feature by hand: `saffron steps` lists the vocabulary".into()
            }
        }
    }
}

/// How drafting went: the draft or why there is none, and what the model calls used either way.
#[derive(Debug)]
pub struct Authored {
    pub result: Result<Draft, AuthorError>,
    pub usage: Usage,
}

/// The rules the model drafts by.
pub fn system_prompt(kind: SourceKind) -> String {
    let sets = match kind {
        SourceKind::Saffron => {
            "- To run a StepSet, write a step line `StepSet <name>` (no Given/When/Then before it), \
             e.g. in a Background.\n"
        }
        SourceKind::Feature => "- This is a plain .feature file: do not use StepSet or Fixture.\n",
    };
    format!(
        "You write Gherkin feature files for Saffron, which runs them in a real browser.\n\
         Every step the project already writes has a recording that replays for free; every new \
         wording costs a recording by an AI agent.\n\
         Rules:\n\
         - Reuse the steps of the vocabulary word for word whenever one says what is needed; \
         only quoted values and numbers may change. Prefer recorded steps.\n\
         - Write a new step only when no step of the vocabulary fits, in the same style.\n\
         {sets}\
         - Tokens such as {{env:NAME}}, <column> and <table:Key> are written as they are; never \
         invent a secret.\n\
         - Behaviour of the application's HTTP API (requests, status codes, JSON fields), when the \
         description asks for it, goes in a Feature tagged @api: Saffron sends its requests with no \
         browser. Reuse the steps marked API there and the others for pages; a Then step names a \
         status only where it matters, by code and name (the API answers 404 Not Found).\n\
         - One Feature with a short description, then its scenarios; Then steps check what the \
         user sees.\n\
         - Answer with the whole file only, in one ```gherkin code block."
    )
}

/// The task: the vocabulary, then the prose.
pub fn task(vocabulary: &Vocabulary, prose: &str) -> String {
    format!(
        "The project's vocabulary:\n\n{}\nDescribe this behaviour as a feature file:\n\n{prose}\n",
        vocabulary.render()
    )
}

/// A masker for every secret the prompt could carry: the `.env` names, the `{env:NAME}` names
/// the vocabulary writes, and the API key's variable, looked up with `env`.
pub fn masker_for_prompt(
    secret_names: &[String],
    vocabulary: &Vocabulary,
    key_env: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Masker {
    let mut names: Vec<String> = secret_names.to_vec();
    names.extend(key_env.map(str::to_string));
    for text in vocabulary.texts() {
        for token in tokenize(text) {
            if let TokenKind::Env(name) = token.kind {
                names.push(name.to_string());
            }
        }
    }
    names.sort();
    names.dedup();
    let secrets: Vec<Secret> = names
        .into_iter()
        .filter_map(|name| env(&name).filter(|value| !value.is_empty()).map(|value| Secret { name, value }))
        .collect();
    secrets.iter().collect()
}

/// Drafts the feature: one call, one repair call if the answer does not parse. Every text sent
/// passes through `masker`.
pub async fn author(
    snapshot: &Snapshot,
    provider: &dyn Provider,
    masker: &Masker,
    vocabulary: &Vocabulary,
    request: &AuthorRequest,
) -> Authored {
    let kind = SourceKind::from_path(&request.path).unwrap_or(SourceKind::Saffron);
    let mut usage = Usage::default();
    let mut conversation = Request {
        system: masker.mask(&system_prompt(kind)),
        messages: vec![Message::user_text(masker.mask(&task(vocabulary, &request.prose)))],
        tools: Vec::new(),
        max_output_tokens: MAX_ANSWER_TOKENS,
    };
    let mut repaired = false;
    let text = loop {
        let response = match provider.send(&conversation).await {
            Ok(response) => response,
            Err(error) => return Authored { result: Err(error.into()), usage },
        };
        usage += &response.usage;
        let answer = Message::assistant(response.content).text();
        let Some(text) = extract_feature(&answer) else {
            return Authored { result: Err(AuthorError::EmptyAnswer), usage };
        };
        let errors = parse_errors(snapshot, &request.path, &text);
        if errors.is_empty() {
            break text;
        }
        if repaired {
            return Authored { result: Err(AuthorError::Unparseable { text, errors }), usage };
        }
        repaired = true;
        conversation.messages.push(Message::assistant(vec![Block::Text { text: masker.mask(&answer) }]));
        conversation.messages.push(Message::user_text(masker.mask(&repair_task(&errors))));
    };
    let (text, rewrites) = rewrite_to_project_wording(snapshot, &request.path, &text);
    let (steps, totals) = price(snapshot, &request.path, &text, &rewrites);
    let draft = Draft {
        path: request.path.clone(),
        text,
        steps,
        totals,
        repaired,
        vocabulary_items: vocabulary.recorded.len() + vocabulary.step_sets.len() + vocabulary.unrecorded.len(),
        vocabulary_left_out: vocabulary.left_out,
    };
    Authored { result: Ok(draft), usage }
}

fn repair_task(errors: &[DraftError]) -> String {
    let list: Vec<String> = errors.iter().map(|error| format!("- {error}")).collect();
    format!(
        "The file does not parse. The parser says:\n{}\nAnswer with the whole corrected file, in one ```gherkin code block.",
        list.join("\n")
    )
}

/// The file in the answer: the first fenced block, else the whole answer.
pub fn extract_feature(answer: &str) -> Option<String> {
    let text = match answer.find("```") {
        Some(open) => {
            let after = &answer[open + 3..];
            // The fence's info string (`gherkin`) ends its line.
            let body = after.find('\n').map_or("", |newline| &after[newline + 1..]);
            body.find("```").map_or(body, |close| &body[..close])
        }
        None => answer,
    };
    let text = text.trim_matches('\n').trim_end();
    (!text.trim().is_empty()).then(|| format!("{text}\n"))
}

/// The parser's errors and the dialect's (an unknown StepSet...), with the draft in the project.
fn parse_errors(snapshot: &Snapshot, path: &Path, text: &str) -> Vec<DraftError> {
    let kind = SourceKind::from_path(path).unwrap_or(SourceKind::Saffron);
    let parsed = saffron_syntax::parse(text, kind);
    let mut diagnostics = parsed.errors.clone();
    if diagnostics.is_empty() {
        let with_draft = with_draft(snapshot, path, text);
        diagnostics.extend(step_sets::check(path, &parsed.document, with_draft.step_sets()));
    }
    diagnostics
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| DraftError { line: d.location.line, column: d.location.column, message: d.message, hint: d.hint })
        .collect()
}

fn with_draft(snapshot: &Snapshot, path: &Path, text: &str) -> Snapshot {
    snapshot.with_changes([Change::SetFile { path: path.to_path_buf(), text: text.to_string() }])
}

/// Each step the project does not write as such, rewritten to the project's wording: a
/// near-duplicate to the best-established wording (recorded first, then the most written), and
/// otherwise a paraphrase of a recorded step or a StepSet ([`paraphrase`]). Returns the new text
/// and, per rewritten wording (`StepSet <name>` for a set), the model's.
fn rewrite_to_project_wording(snapshot: &Snapshot, path: &Path, text: &str) -> (String, BTreeMap<String, String>) {
    let kind = SourceKind::from_path(path).unwrap_or(SourceKind::Saffron);
    let parsed = saffron_syntax::parse(text, kind);
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut rewrites = BTreeMap::new();
    let paraphraser = paraphrase::Paraphraser::new(snapshot);
    for block in step_blocks(&parsed.document) {
        let mut previous = BLOCK_START.to_string();
        let mut role = StepRole::Context;
        for step in block.steps {
            role = StepRole::of_keyword(step.keyword_type).unwrap_or(role);
            if step.is_invocation || step.text.is_empty() {
                continue;
            }
            let span = step.text_span;
            let written_here = text.get(span.start..span.end) == Some(step.text.as_str());
            let mut now = step.text.clone();
            let own = snapshot.entry(&step.text).map(|entry| entry.status());
            let near = if own.is_some_and(|status| status != StepStatus::Unrecorded) {
                None
            } else {
                snapshot
                    .near_duplicates(&step.text)
                    .into_iter()
                    .filter(|near| own.is_none() || near.status != StepStatus::Unrecorded)
                    .min_by(|a, b| {
                        a.status.cmp(&b.status).then(b.count.cmp(&a.count)).then(b.similarity.total_cmp(&a.similarity))
                    })
            };
            let has_argument = step.data_table.is_some() || step.doc_string.is_some();
            if let Some(best) = near.filter(|_| written_here) {
                edits.push((span.start..span.end, best.text.to_string()));
                rewrites.insert(best.text.to_string(), step.text.clone());
                now = best.text.to_string();
            } else if own.is_none() && !has_argument && written_here {
                let draft = paraphrase::DraftStep {
                    text: &step.text,
                    role,
                    previous: &previous,
                    step_sets_allowed: kind == SourceKind::Saffron,
                };
                match paraphraser.paraphrased(draft) {
                    Some(Paraphrased::Step(project)) => {
                        edits.push((span.start..span.end, project.clone()));
                        rewrites.insert(project.clone(), step.text.clone());
                        now = project;
                    }
                    Some(Paraphrased::StepSet(name)) => {
                        let invocation = format!("StepSet {name}");
                        edits.push((step.keyword_span.start..span.end, invocation.clone()));
                        rewrites.insert(invocation, step.text.clone());
                        // Succession skips invocations, as the index does.
                        continue;
                    }
                    None => {}
                }
            }
            previous = pattern_key(&now);
        }
    }
    let mut out = text.to_string();
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    for (range, replacement) in edits {
        out.replace_range(range, &replacement);
    }
    (out, rewrites)
}

/// Each step the draft runs with its cost, and the totals over distinct texts.
fn price(
    snapshot: &Snapshot,
    path: &Path,
    text: &str,
    rewrites: &BTreeMap<String, String>,
) -> (Vec<DraftedStep>, DraftTotals) {
    let kind = SourceKind::from_path(path).unwrap_or(SourceKind::Saffron);
    let parsed = saffron_syntax::parse(text, kind);
    let with_draft = with_draft(snapshot, path, text);
    let registry = with_draft.step_sets();
    // A step the project has not recorded as written replays for free all the same when a run
    // would seed it from a recording: the same pattern with other quoted values, or the same
    // table keys (see `seed`). The draft has no recording of its own to leave out.
    let sources = SeedSources::of(snapshot).except(Path::new(""));
    // The scenarios' expanded steps are what runs; a set defined but never run costs nothing.
    let runs = pickles::compile_templates(&parsed.document, &registry);
    let mut seedable_texts = std::collections::BTreeSet::new();
    for pickle in &runs {
        for (step, spec) in pickle.steps.iter().zip(step_specs(pickle)) {
            if !step.step.is_invocation && seed::seedable(&spec, &sources) {
                seedable_texts.insert(step.text.clone());
            }
        }
    }
    // Costs are the established project's: a text the draft alone writes is recorded nowhere.
    let cost_of = |text: &str| match snapshot.entry(text).map(|entry| entry.status()) {
        Some(status @ (StepStatus::Recorded | StepStatus::Divergent)) => StepCost::of(status),
        _ if seedable_texts.contains(text) => StepCost::Free,
        _ => StepCost::NeedsRecording,
    };
    let mut steps = Vec::new();
    for step in parsed.document.steps() {
        if step.is_invocation {
            let Some(set) = registry.get(&step.text) else { continue };
            let mut rewritten_from = rewrites.get(&format!("StepSet {}", step.text)).cloned();
            for inner in set.steps() {
                steps.push(DraftedStep {
                    line: step.location.line,
                    keyword: inner.keyword.clone(),
                    text: inner.text.clone(),
                    cost: cost_of(&inner.text),
                    // Said once, on the set's first step: the invocation replaced one step.
                    rewritten_from: rewritten_from.take(),
                    step_set: Some(set.name.clone()),
                    closest_recorded: None,
                });
            }
            continue;
        }
        steps.push(DraftedStep {
            line: step.location.line,
            keyword: step.keyword.clone(),
            text: step.text.clone(),
            cost: cost_of(&step.text),
            rewritten_from: rewrites.get(&step.text).cloned(),
            step_set: None,
            closest_recorded: None,
        });
    }
    for step in steps.iter_mut().filter(|step| step.cost == StepCost::NeedsRecording) {
        step.closest_recorded = closest_recorded(snapshot, &step.text, kind == SourceKind::Saffron);
    }
    let mut distinct: BTreeMap<String, StepCost> = BTreeMap::new();
    for pickle in &runs {
        for step in pickle.steps.iter().filter(|step| !step.step.is_invocation) {
            distinct.insert(step.text.clone(), cost_of(&step.text));
        }
    }
    let count = |wanted: StepCost| distinct.values().filter(|cost| **cost == wanted).count();
    let totals = DraftTotals {
        distinct_steps: distinct.len(),
        free: count(StepCost::Free),
        divergent: count(StepCost::Divergent),
        needs_recording: count(StepCost::NeedsRecording),
        rewritten: rewrites.len(),
    };
    (steps, totals)
}

/// The model that drafts, from `[agent]` of the project, and what masking needs.
pub struct AuthorAgent {
    pub provider: Box<dyn Provider>,
    pub prices: Option<Prices>,
    /// The variable holding the API key: masked too, never typed.
    pub key_env: Option<String>,
    /// `{env:NAME}` names of the project's `.env`.
    pub secret_names: Vec<String>,
    /// The run's lookup: the environment, then `.env`.
    pub env: EnvLookup,
}

/// Why no model can draft: the problem and what to do about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{problem}")]
pub struct AuthorSetupError {
    pub problem: String,
    pub hint: String,
}

/// Connects the provider `[agent]` names. An external agent program cannot draft: drafting is
/// one plain model call, and a program only takes a task to act on.
pub fn connect(root: &Path, http: &HttpSettings) -> Result<AuthorAgent, AuthorSetupError> {
    let config = crate::session::load_config(root).map_err(|error| AuthorSetupError {
        problem: error.to_string(),
        hint: "fix saffron.toml; `saffron check` shows its problems".into(),
    })?;
    let options = crate::session::options_with_env(root, Vec::new());
    let env = options.env.clone();
    let setup = config
        .agent
        .unwrap_or_default()
        .resolve(&|name| env(name))
        .map_err(|error| AuthorSetupError { problem: error.to_string(), hint: error.hint() })?;
    let agent = match setup {
        AgentSetup::BuiltIn(agent) => agent,
        AgentSetup::External(_) => {
            return Err(AuthorSetupError {
                problem: "`command` in [agent] runs an external agent program, which cannot draft a feature: \
                          drafting is one plain call to a model"
                    .into(),
                hint: "set `provider` and `model` in [agent] (anthropic or openai) instead of `command`, \
                       or draft with your assistant's own model through `saffron mcp` (the draft_feature prompt)"
                    .into(),
            });
        }
    };
    let provider =
        agent.connect(http).map_err(|error| AuthorSetupError { problem: error.to_string(), hint: error.hint() })?;
    let mut secret_names = options.secret_names.clone();
    secret_names.retain(|name| Some(name) != agent.key_env.as_ref());
    Ok(AuthorAgent { provider, prices: agent.prices, key_env: agent.key_env.clone(), secret_names, env: options.env })
}

impl AuthorAgent {
    /// The masker for a prompt holding `vocabulary`.
    pub fn masker(&self, vocabulary: &Vocabulary) -> Masker {
        let env = self.env.clone();
        masker_for_prompt(&self.secret_names, vocabulary, self.key_env.as_deref(), &move |name| env(name))
    }
}

/// The recorded step, or the StepSet, whose words share the most content words with `text`,
/// when they share at least half of them (and two or more): `I log in as the demo user`
/// suggests `StepSet signed in as the demo user` (a StepSet only where the file may run one).
fn closest_recorded(snapshot: &Snapshot, text: &str, step_sets_allowed: bool) -> Option<String> {
    let wanted = vocabulary::content_tokens(text);
    let needed = wanted.len().div_ceil(2).max(2);
    let steps = snapshot
        .entries_unordered()
        .filter(|entry| entry.status() == StepStatus::Recorded && entry.text.as_ref() != text)
        .map(|entry| (vocabulary::content_tokens(&entry.text), entry.count(), entry.text.to_string()));
    let registry = snapshot.step_sets();
    let sets = registry
        .definitions()
        .into_iter()
        .filter(|_| step_sets_allowed)
        .map(|set| (vocabulary::content_tokens(&set.name), 0, format!("StepSet {}", set.name)))
        .collect::<Vec<_>>();
    steps
        .chain(sets)
        .map(|(words, uses, candidate)| (words.intersection(&wanted).count(), uses, candidate))
        .filter(|(shared, _, _)| *shared >= needed)
        .max_by(|(a, a_uses, a_text), (b, b_uses, b_text)| a.cmp(b).then(a_uses.cmp(b_uses)).then(b_text.cmp(a_text)))
        .map(|(_, _, candidate)| candidate)
}

#[cfg(test)]
mod tests;
