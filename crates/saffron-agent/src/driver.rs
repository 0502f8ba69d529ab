//! Who drives a session: the built-in loop over a provider, or (in a later layer) an external
//! agent program. The runner holds one [`AgentDriver`] and never asks which kind it is.

use saffron_recording::Masker;

use crate::config::BuiltInAgent;
use crate::cost::Prices;
use crate::provider::{BoxFuture, HttpSettings, Provider, ProviderError};
use crate::session::{Budget, Session, SessionReport, ToolGateway};

/// Runs one agent session over a gateway, from a system prompt and a task.
///
/// Every text the driver hands to a model, or to a program that talks to one, passes through
/// `masker` first.
pub trait AgentDriver: Send + Sync {
    /// The agent, for reports: `anthropic claude-sonnet-4-5`, or the external command.
    fn describe(&self) -> String;

    /// What one session may spend.
    fn budget(&self) -> Budget;

    /// The configured prices, for the cost in reports.
    fn prices(&self) -> Option<Prices>;

    fn run<'a>(
        &'a self,
        gateway: &'a mut dyn ToolGateway,
        masker: &'a Masker,
        system: &'a str,
        task: &'a str,
    ) -> BoxFuture<'a, SessionReport>;
}

/// The built-in agent: [`Session`]'s loop over a provider.
pub struct ProviderDriver {
    provider: Box<dyn Provider>,
    budget: Budget,
    prices: Option<Prices>,
}

impl ProviderDriver {
    pub fn new(provider: Box<dyn Provider>, budget: Budget, prices: Option<Prices>) -> ProviderDriver {
        ProviderDriver { provider, budget, prices }
    }

    /// The driver for a checked `[agent]` table naming a built-in provider.
    pub fn connect(agent: &BuiltInAgent, http: &HttpSettings) -> Result<ProviderDriver, ProviderError> {
        Ok(ProviderDriver::new(agent.connect(http)?, agent.budget, agent.prices))
    }
}

impl AgentDriver for ProviderDriver {
    fn describe(&self) -> String {
        self.provider.describe()
    }

    fn budget(&self) -> Budget {
        self.budget
    }

    fn prices(&self) -> Option<Prices> {
        self.prices
    }

    fn run<'a>(
        &'a self,
        gateway: &'a mut dyn ToolGateway,
        masker: &'a Masker,
        system: &'a str,
        task: &'a str,
    ) -> BoxFuture<'a, SessionReport> {
        Box::pin(
            async move { Session::new(self.provider.as_ref(), masker, self.budget).run(gateway, system, task).await },
        )
    }
}
