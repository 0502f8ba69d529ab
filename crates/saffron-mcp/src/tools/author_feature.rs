//! `author_feature`: a feature drafted from prose by the project's own `[agent]` model, in the
//! project's vocabulary, as `saffron author` drafts it, with each step's cost. Nothing is
//! written: the assistant shows the draft, and saves it where the person wants it.

use std::fmt::Write as _;
use std::path::PathBuf;

use saffron_agent::{Cost, HttpSettings};
use saffron_index::Snapshot;
use saffron_recording::Masker;
use saffron_runner::author::{
    self, AuthorAgent, AuthorError, AuthorRequest, DraftTotals, DraftedStep, StepCost, Vocabulary,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::check_feature::{DraftKind, draft_path};
use super::{Render, ToolError};
use crate::project::{Project, display_path};

/// Prose longer than this is refused: a behaviour is described in a few paragraphs.
const MAX_PROSE_BYTES: usize = 64 << 10;

/// The vocabulary budget may be raised this far at most.
const MAX_VOCABULARY_TOKENS: usize = 100_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AuthorFeatureArgs {
    /// The behaviour to draft, in prose: "search orders and open an invoice".
    pub prose: String,
    /// Where the draft would be saved, relative to the project root (nothing is written); its
    /// extension decides the dialect. Default: `features/draft.saffron`.
    #[serde(default)]
    pub path: Option<String>,
    /// `saffron` (default: StepSets allowed) or `feature` (plain Gherkin), when no path is given.
    #[serde(default)]
    pub kind: Option<DraftKind>,
    /// Tokens the project's vocabulary may take in the drafting prompt (default 6000); the
    /// least relevant steps are left out.
    #[serde(default)]
    pub vocabulary_tokens: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthorFeatureOutput {
    /// The path the draft was made for (not written).
    pub path: String,
    /// The whole draft, parsed, its near-duplicates rewritten to the project's wording.
    pub text: String,
    /// Each step the draft runs, in file order; a StepSet invocation gives its set's steps.
    pub steps: Vec<DraftedStep>,
    pub totals: AuthoredTotals,
    /// The first answer did not parse; the repair round's did.
    pub repaired: bool,
    /// The model calls: `anthropic claude-sonnet-4-5: 2,310 tokens in, 212 out, 1 call, 3.1 s;
    /// cost not reported`.
    pub agent: String,
    /// US dollars, when prices are configured or the provider reported them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthoredTotals {
    /// Distinct step texts the draft's scenarios run, by cost, and the steps rewritten to an
    /// existing wording.
    #[serde(flatten)]
    pub counts: DraftTotals,
    pub summary: String,
}

/// Everything the drafting call needs, taken from the project under its lock.
pub struct Prepared {
    snapshot: Snapshot,
    agent: AuthorAgent,
    vocabulary: Vocabulary,
    masker: Masker,
    request: AuthorRequest,
}

pub fn prepare(project: &Project, args: AuthorFeatureArgs) -> Result<Prepared, ToolError> {
    let prose = args.prose.trim().to_string();
    if prose.is_empty() {
        return Err(ToolError::new("the prose is empty", "describe the behaviour to draft in `prose`"));
    }
    if prose.len() > MAX_PROSE_BYTES {
        return Err(ToolError::new("the prose is longer than 64 KiB", "describe one feature at a time"));
    }
    let budget = args.vocabulary_tokens.unwrap_or(author::DEFAULT_VOCABULARY_BUDGET);
    if budget == 0 || budget > MAX_VOCABULARY_TOKENS {
        return Err(ToolError::new(
            format!("vocabularyTokens must be between 1 and {MAX_VOCABULARY_TOKENS}, not {budget}"),
            "leave vocabularyTokens out for the default (6000)",
        ));
    }
    let path: PathBuf = draft_path(args.path.as_deref(), args.kind)?;
    let agent = author::connect(project.root(), &HttpSettings::default()).map_err(|error| {
        ToolError::new(
            format!("no model can draft: {}", error.problem),
            format!(
                "{}; or draft it yourself with the draft_feature prompt and check it with check_feature",
                error.hint
            ),
        )
    })?;
    let mut snapshot = project.snapshot();
    if snapshot.file(&path).is_some() {
        // The draft is for that path: the file there now is what it would replace, not the
        // project's wording (its steps would pass for the project's own and keep a paraphrase
        // from being matched), as `saffron author --force` has it.
        snapshot = snapshot.with_changes([saffron_index::Change::RemoveFile { path: path.clone() }]);
    }
    let mut vocabulary = author::vocabulary::select(&snapshot, &prose, budget);
    vocabulary.api_services = author::vocabulary::api_services(project.root());
    let masker = agent.masker(&vocabulary);
    Ok(Prepared {
        snapshot,
        agent,
        vocabulary,
        masker,
        request: AuthorRequest { prose, path, vocabulary_budget: budget },
    })
}

pub async fn execute(prepared: Prepared) -> Result<AuthorFeatureOutput, ToolError> {
    let Prepared { snapshot, agent, vocabulary, masker, request } = prepared;
    let authored = author::author(&snapshot, agent.provider.as_ref(), &masker, &vocabulary, &request).await;
    let cost = Cost::of(&authored.usage, agent.prices);
    let usage = masker.mask(&format!("{}: {}; {}", agent.provider.describe(), authored.usage, cost));
    let draft = match authored.result {
        Ok(draft) => draft,
        Err(error) => {
            let detail = match &error {
                AuthorError::Unparseable { errors, .. } => {
                    errors.iter().map(|e| format!("\n- {e}")).collect::<String>()
                }
                _ => String::new(),
            };
            return Err(ToolError::new(
                masker.mask(&format!("{error}{detail}\n({usage})")),
                masker.mask(&error.hint()),
            ));
        }
    };
    let steps = draft
        .steps
        .iter()
        .map(|step| DraftedStep {
            text: masker.mask(&step.text),
            rewritten_from: step.rewritten_from.as_deref().map(|from| masker.mask(from)),
            closest_recorded: step.closest_recorded.as_deref().map(|closest| masker.mask(closest)),
            ..step.clone()
        })
        .collect();
    Ok(AuthorFeatureOutput {
        path: display_path(&draft.path),
        text: masker.mask(&draft.text),
        steps,
        totals: AuthoredTotals { summary: draft.totals.summary(), counts: draft.totals.clone() },
        repaired: draft.repaired,
        agent: usage,
        cost_usd: cost.usd(),
    })
}

impl Render for AuthorFeatureOutput {
    fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "Draft for {} (not written): {}", self.path, self.totals.summary);
        let _ = writeln!(out, "\n{}", self.text);
        let _ = writeln!(out, "Steps:");
        for step in &self.steps {
            let cost = match step.cost {
                StepCost::Free => "free",
                StepCost::Divergent => "divergent",
                StepCost::NeedsRecording => "needsRecording",
            };
            let _ = write!(out, "  line {:>3}  {:<15} {}{}", step.line, cost, step.keyword, step.text);
            if let Some(set) = &step.step_set {
                let _ = write!(out, "  (StepSet {set})");
            }
            if let Some(from) = &step.rewritten_from {
                let _ = write!(out, "  (rewritten from: {from})");
            }
            if let Some(closest) = &step.closest_recorded {
                let _ = write!(out, "  (closest recorded step: {closest})");
            }
            out.push('\n');
        }
        let _ = writeln!(out, "agent: {}", self.agent);
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rmcp::model::JsonObject;
    use saffron_agent::Request;
    use saffron_agent::testing::{FakeServer, Reply, Wire};
    use serde_json::json;

    use crate::server::SaffronServer;

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                copy_dir(&path, &to.join(entry.file_name()));
            } else {
                std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
            }
        }
    }

    /// The example project (features and recordings) with `[agent]` on the fake server.
    fn example(dir: &Path, server: &FakeServer) {
        let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        copy_dir(&repository.join("features"), &dir.join("features"));
        copy_dir(&repository.join(".saffron/cache"), &dir.join(".saffron/cache"));
        let toml = format!(
            "[agent]\nprovider = \"openai\"\nmodel = \"fake-model\"\nbase_url = \"{}\"\napi_key_env = \"\"\n",
            server.base_url()
        );
        std::fs::write(dir.join("saffron.toml"), toml).expect("toml");
    }

    fn arguments(value: serde_json::Value) -> JsonObject {
        value.as_object().cloned().expect("an object")
    }

    /// The tool's structured answer for a draft of `prose` at `path` in the project at `dir`,
    /// which must not be an error.
    async fn drafted(dir: &Path, prose: &str, path: &str) -> serde_json::Value {
        let saffron = SaffronServer::open(dir.to_path_buf());
        let result = saffron.author_feature(arguments(json!({ "prose": prose, "path": path }))).await;
        assert_eq!(result.is_error, Some(false), "{result:?}");
        result.structured_content.expect("structured")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_draft_comes_back_priced_and_nothing_is_written() {
        let server = FakeServer::start(Wire::OpenAi, |request: &Request| {
            let task = request.messages.first().map(|m| m.text()).unwrap_or_default();
            if !task.contains("I open the invoice of \"#1001\"") {
                return Reply::text("no vocabulary was given");
            }
            Reply::text(
                "```gherkin\nFeature: Invoices\n  Background:\n    StepSet signed in as the demo user\n\n  \
                 Scenario: Open one\n    When I open the invoice of \"#1001\"\n    \
                 Then I see an invoice \"Invoice #1001\"\n    And the invoice is paid\n```",
            )
        })
        .await
        .expect("server");
        let dir = tempfile::tempdir().expect("temp dir");
        example(dir.path(), &server);
        let before = std::fs::read_dir(dir.path().join("features")).expect("dir").count();
        let output = drafted(dir.path(), "open an invoice", "features/invoices.saffron").await;
        assert_eq!(output["path"], "features/invoices.saffron");
        let text = output["text"].as_str().expect("text");
        assert!(text.contains("Then I see the invoice \"Invoice #1001\""), "rewritten: {text}");
        let steps = output["steps"].as_array().expect("steps");
        let cost_of = |wanted: &str| {
            steps.iter().find(|step| step["text"] == wanted).map(|step| step["cost"].clone()).expect(wanted)
        };
        assert_eq!(cost_of("I see the invoice \"Invoice #1001\""), "free");
        assert_eq!(cost_of("the invoice is paid"), "needsRecording");
        assert_eq!(cost_of("I sign in with the demo account"), "free");
        assert_eq!(output["totals"]["free"], 5);
        assert_eq!(output["totals"]["needsRecording"], 1);
        assert!(
            output["agent"].as_str().expect("agent").starts_with("openai fake-model: 100 tokens in, 20 out, 1 call")
        );
        assert_eq!(std::fs::read_dir(dir.path().join("features")).expect("dir").count(), before, "nothing written");
    }

    /// A draft for a path the project has a file at replaces that file: the file's steps are
    /// not the project's wording, and a paraphrase of a recorded step is still rewritten.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_file_a_draft_would_replace_is_not_the_projects_wording() {
        // The issue's paraphrase: the total "shows" what the project says it "is".
        let feature = "Feature: Live total\n  Scenario: The total follows the quantity\n    \
                       Given I sign in with the demo account\n    \
                       StepSet a new order form\n    \
                       When I set the quantity to 2 and choose \"Mugs\"\n    \
                       Then the total shows €14.00\n";
        let draft = format!("```gherkin\n{feature}```");
        let server = FakeServer::start(Wire::OpenAi, move |_: &Request| Reply::text(&draft)).await.expect("server");
        let dir = tempfile::tempdir().expect("temp dir");
        example(dir.path(), &server);
        // An earlier draft at the path, with the paraphrase in it.
        std::fs::write(dir.path().join("features/total.saffron"), feature).expect("earlier draft");
        let output = drafted(dir.path(), "watch the total", "features/total.saffron").await;
        let text = output["text"].as_str().expect("text");
        assert!(text.contains("Then the live total is \"Total: €14.00\""), "rewritten: {text}");
        assert_eq!(std::fs::read_to_string(dir.path().join("features/total.saffron")).expect("kept"), feature);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn without_a_provider_the_tool_says_what_to_do() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("saffron.toml"), "[agent]\ncommand = \"my-agent\"\n").expect("toml");
        let saffron = SaffronServer::open(dir.path().to_path_buf());
        let result = saffron.author_feature(arguments(json!({ "prose": "open an invoice" }))).await;
        assert_eq!(result.is_error, Some(true));
        let text = format!("{:?}", result.content);
        assert!(text.contains("cannot draft a feature"), "{text}");
        assert!(text.contains("draft_feature prompt"), "{text}");
        let empty = saffron.author_feature(arguments(json!({ "prose": "  " }))).await;
        assert_eq!(empty.is_error, Some(true));
    }
}
