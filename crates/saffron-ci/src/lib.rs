//! The CI loop: a repair that `saffron run` made in CI travels to a reviewer's checkout as a
//! heal bundle. [`bundle::export`] writes the pending proposals, the run's report and its
//! evidence into one zip with a manifest of digests; [`bundle::import`] checks the bundle whole
//! (digests, paths, sizes, the repository it came from) before it writes anything, then files
//! each proposal that still fits the checkout.
//!
//! Plain data in, plain data out: the caller gives the project (its root, its index snapshot,
//! its git remotes) and the CI environment as values, so every rule is tested without a CI.

pub mod branch;
pub mod bundle;
pub mod ci_env;
pub mod gh;
pub mod git;
pub mod identity;
pub mod ledger;
pub mod pull_request;
