//! What the recording agent used, as every report shows it: per recorded scenario (its model
//! calls, tokens, time, cost, seeded steps, fragile targets) and for the whole run. A cost no
//! one priced or reported reads "cost not reported", never $0.

use std::time::Duration;

use saffron_agent::{Cost, CostSource, Usage};
use serde::{Deserialize, Serialize};

use crate::{AgentRun, AgentUsage, ScenarioResult};

const CONFIGURED_PRICES: &str = "configured prices";
const REPORTED: &str = "reported by the provider";

impl AgentRun {
    /// What `driver` did for a scenario of `steps` steps: its usage in `sessions` sessions, the
    /// cost from its prices or the vendor's report, the fragile targets it recorded. Nothing
    /// saved, filed or seeded yet: the caller says so.
    pub(crate) fn of(
        driver: &dyn saffron_agent::AgentDriver,
        usage: &Usage,
        steps: usize,
        sessions: u32,
        fragile_targets: Vec<String>,
    ) -> AgentRun {
        let mut run = AgentRun {
            agent: driver.describe(),
            usage: AgentUsage::from(usage),
            cost_usd: None,
            cost_source: None,
            seeded_steps: 0,
            steps,
            sessions,
            fragile_targets,
            saved: None,
            artifacts: None,
            proposal: None,
            repaired_from_step: None,
        };
        run.set_cost(Cost::of(usage, driver.prices()));
        run
    }

    /// Sets `cost_usd` and `cost_source` from `cost`.
    pub fn set_cost(&mut self, cost: Cost) {
        match cost {
            Cost::Known { usd, source } => {
                self.cost_usd = Some(usd);
                self.cost_source = Some(
                    match source {
                        CostSource::ConfiguredPrices => CONFIGURED_PRICES,
                        CostSource::Reported => REPORTED,
                    }
                    .to_string(),
                );
            }
            Cost::NotReported => {
                self.cost_usd = None;
                self.cost_source = None;
            }
        }
    }

    /// The cost as [`set_cost`](AgentRun::set_cost) recorded it (a report read back included).
    pub fn cost(&self) -> Cost {
        match self.cost_usd {
            Some(usd) => {
                let source = match self.cost_source.as_deref() {
                    Some(REPORTED) => CostSource::Reported,
                    _ => CostSource::ConfiguredPrices,
                };
                Cost::Known { usd, source }
            }
            None => Cost::NotReported,
        }
    }

    /// What the agent did, one line each: [`summary`](AgentRun::summary), what was saved or
    /// where the evidence of an unsaved recording is kept, each fragile target.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = match self.repaired_from_step {
            Some(step) => vec![format!("repaired from step {step} by {}", self.summary())],
            None => vec![format!("recorded by {}", self.summary())],
        };
        if let Some(saved) = &self.saved {
            lines.push(format!("saved {saved}"));
        }
        if let Some(proposal) = &self.proposal {
            lines.push(format!("proposal filed for review: {proposal}"));
        }
        if let Some(artifacts) = &self.artifacts {
            lines.push(format!("nothing saved; the evidence is in {artifacts}"));
        }
        lines.extend(self.fragile_targets.iter().map(|target| format!("fragile target: {target}")));
        lines
    }

    /// `anthropic m: 12,345 tokens in (10,000 cached), 1,234 out, 7 calls, 12.3 s; cost not
    /// reported; 5 of 8 steps seeded; 2 sessions`.
    pub fn summary(&self) -> String {
        let sessions = if self.sessions == 1 { "session" } else { "sessions" };
        format!(
            "{}: {}; {}; {} of {} steps seeded; {} {sessions}",
            self.agent,
            self.usage.as_usage(),
            self.cost(),
            self.seeded_steps,
            self.steps,
            self.sessions
        )
    }
}

impl AgentUsage {
    /// The usage as the agent crate counts it, for its one way of writing it.
    pub fn as_usage(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cache_read_tokens,
            cache_write_tokens: self.cache_write_tokens,
            calls: self.calls,
            model_time: Duration::from_millis(self.model_time_ms),
            reported_cost_usd: None,
        }
    }

    fn add(&mut self, other: &AgentUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.calls += other.calls;
        self.model_time_ms += other.model_time_ms;
    }
}

/// What the agent used over a whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentTotals {
    /// Scenarios the agent recorded or repaired (or tried to).
    pub scenarios: usize,
    /// Of `scenarios`, those it repaired after a failed replay.
    #[serde(default)]
    pub repaired: usize,
    pub usage: AgentUsage,
    /// The sum of the costs that are known, and of how many scenarios they are: the rest have
    /// no cost reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub priced_scenarios: usize,
    pub seeded_steps: usize,
    pub steps: usize,
    pub sessions: u32,
    pub fragile_targets: usize,
}

impl AgentTotals {
    /// The totals of the scenarios an agent worked on; `None` when it worked on none.
    pub fn of(scenarios: &[ScenarioResult]) -> Option<AgentTotals> {
        let mut totals = AgentTotals::default();
        for run in scenarios.iter().filter_map(|scenario| scenario.agent.as_ref()) {
            totals.scenarios += 1;
            if run.repaired_from_step.is_some() {
                totals.repaired += 1;
            }
            totals.usage.add(&run.usage);
            if let Some(usd) = run.cost_usd {
                totals.cost_usd = Some(totals.cost_usd.unwrap_or_default() + usd);
                totals.priced_scenarios += 1;
            }
            totals.seeded_steps += run.seeded_steps;
            totals.steps += run.steps;
            totals.sessions += run.sessions;
            totals.fragile_targets += run.fragile_targets.len();
        }
        (totals.scenarios > 0).then_some(totals)
    }

    /// `$0.0842`, `$0.0421 for 1 of 2 recorded scenarios (the rest: cost not reported)` or
    /// `cost not reported`.
    pub fn cost_text(&self) -> String {
        match self.cost_usd {
            None => "cost not reported".to_string(),
            Some(usd) if self.priced_scenarios == self.scenarios => dollars(usd),
            Some(usd) => format!(
                "{} for {} of {} recorded scenarios (the rest: cost not reported)",
                dollars(usd),
                self.priced_scenarios,
                self.scenarios
            ),
        }
    }

    /// `2 scenario(s) recorded: 40,000 tokens in, ...; $0.0842; 10 of 20 steps seeded; 3
    /// sessions; 1 fragile target`.
    pub fn summary(&self) -> String {
        let sessions = if self.sessions == 1 { "session" } else { "sessions" };
        let fragile = if self.fragile_targets == 1 { "target" } else { "targets" };
        let worked = match self.repaired {
            0 => format!("{} scenario(s) recorded", self.scenarios),
            repaired if repaired == self.scenarios => format!("{repaired} scenario(s) repaired"),
            repaired => format!("{} scenario(s) recorded, {repaired} repaired", self.scenarios - repaired),
        };
        format!(
            "{worked}: {}; {}; {} of {} steps seeded; {} {sessions}; {} fragile {fragile}",
            self.usage.as_usage(),
            self.cost_text(),
            self.seeded_steps,
            self.steps,
            self.sessions,
            self.fragile_targets
        )
    }
}

/// Dollars as [`Cost`] writes them: four decimals under a dollar, where cents hide the cost.
fn dollars(usd: f64) -> String {
    if usd >= 1.0 { format!("${usd:.2}") } else { format!("${usd:.4}") }
}
