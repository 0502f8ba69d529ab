//! The orchestrator: a run's flow, over any [`crate::medium::Medium`].
//!
//! - [`run`]: a run's executions on parallel workers: each feature's Fixture first (its verdict
//!   is its scenarios' floor), replays with retries, a failed replay escalated to a repair, the
//!   scenarios without a fresh recording recorded afterwards on the agent workers (an
//!   Outline's rows share one recording), drift refreshed into a proposal.
//! - [`replay`]: one execution of a recording, step by step: its tokens filled in at the last
//!   moment, each action performed by the medium, a failed Then step run again as recorded and
//!   never handed to a repair, the verdict.

pub(crate) mod replay;
pub(crate) mod run;
