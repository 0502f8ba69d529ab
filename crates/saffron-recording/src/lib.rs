//! Recordings and proposals: their formats, validation, tokens, digests and the project store.
//!
//! Plain data in, plain data out: nothing here knows Gherkin parsing, editors, agents or
//! browsers. The format is described for users in `docs/recording-format.md`.
//!
//! - [`Recording`]: one scenario's steps and the [`Action`]s recorded for each, on
//!   [`Target`]s; [`Proposal`]: a recording waiting for review, bound by digests.
//! - [`validate_recording`] / [`validate_proposal`] (and the `parse_*` forms): the one door
//!   every file comes in by, naming the first problem by JSON path.
//! - [`tokenize`], [`Resolver`], [`Masker`]: `<param>`, `{env:NAME}` and friends.
//! - [`Action::operands`]: the one walk over an action's string values (with their JSON paths),
//!   which substitution, seeding and validation share.
//! - [`Handler`]: an interruption (a consent dialog, an expired session) and the actions that
//!   clear it, consulted by replay instead of being recorded into scenarios.
//! - [`steps_digest`], [`contract_digest`], [`content_digest`]: freshness and bindings.
//! - [`Store`]: `.saffron/` on disk, with atomic, locked writes and stable slugs; [`layout`]:
//!   where each thing lives there, the one place its paths are spelled.

#![warn(missing_docs)]

mod action;
mod date;
mod diff;
mod digest;
mod handler;
pub mod http;
pub mod layout;
mod mask;
mod model;
pub mod navigation;
mod operands;
mod proposal;
mod resolve;
mod schema;
mod scrub;
mod slug;
mod store;
mod target;
mod tokens;
pub mod upload;
mod validate;

pub use action::{Action, ElementState, ResponseMatcher, describe_download};
pub use date::{DATE_DIRECTIVES, Date, DateFormatError, now_rfc3339};
pub use diff::{ActionChange, StepDiff, diff_actions, diff_recordings};
pub use digest::{content_digest, contract_digest, steps_digest, steps_digest_reading, table_keys_of};
pub use handler::{Detector, HANDLER_VERSION, Handler, Resume};
pub use mask::Masker;
pub use model::{RECORDING_VERSION, RecordedStep, Recording, StepKind, StepSpec};
pub use operands::{Operand, OperandKind, OperandMut};
pub use proposal::{Binding, FeatureEdit, PROPOSAL_VERSION, Proposal, ProposalDraft, ScenarioRef, Stale, Usage};
pub use resolve::{ResolveError, Resolved, Resolver, Secret, new_unique_seed};
pub use schema::SchemaKind;
pub use slug::{MAX_SLUG_LEN, feature_slug, scenario_slug, scenario_slugs};
pub use store::{Listing, Scan, Store, StoreError, StoreLock, read_inside, to_json_bytes, write_atomic};
pub use target::{MAX_FRAME_DEPTH, MAX_SCOPE_DEPTH, Scope, ScopeCore, SemanticCore, Target, Tier};
pub use tokens::{MAX_DATE_OFFSET, TOKEN_SYNTAX, Token, TokenKind, tokenize};
pub use validate::{
    ValidationError, line_and_column, parse_handler, parse_proposal, parse_recording, validate_handler,
    validate_proposal, validate_recording, validate_skeleton,
};
