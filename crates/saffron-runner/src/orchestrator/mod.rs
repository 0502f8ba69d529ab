//! The orchestrator: a run's flow, over any [`crate::medium::Medium`].
//!
//! - [`replay`]: one execution of a recording, step by step: its tokens filled in at the last
//!   moment, each action performed by the medium, a failed Then step run again as recorded and
//!   never handed to a repair, the verdict.

pub(crate) mod replay;
