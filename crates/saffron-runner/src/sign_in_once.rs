//! Signing in once per run: the steps a scenario starts with that leave a signed-in session (a
//! StepSet tagged `@session`, or the steps `[session] steps` lists) are performed by the first
//! scenario that needs them; the browser context's state (cookies, the origin's
//! `localStorage`, the address it ended on) is then kept, and each later scenario that starts
//! with the same steps restores it instead of performing them.
//!
//! A restored session can be stale (signed out by another scenario, expired): a scenario that
//! restored one and then failed on the sign-in page, or was answered 401, is run again once from
//! the start with the steps performed (see [`crate::orchestrator::replay`]). The state holds
//! credentials: it lives in this process's memory only, and every value in it is masked.

use std::collections::HashMap;
use std::sync::Mutex;

use saffron_browser::StorageState;
use saffron_recording::Masker;

use crate::plan::Execution;

pub use saffron_syntax::step_sets::SESSION_TAG;

/// The first steps of a scenario that sign in, as the plan finds them (a StepSet tagged
/// `@session` that the scenario, or its Background, starts with).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSteps {
    /// How many of the scenario's first steps they are.
    pub steps: usize,
    /// The StepSet's name.
    pub name: String,
}

/// The sign-in an execution starts with, and the key its saved state is kept under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignIn {
    pub steps: usize,
    /// The StepSet's name, or the first step's text.
    pub name: String,
    /// The steps' texts as they run (an Outline row's values in): who signs in.
    pub key: String,
}

/// A saved session.
#[derive(Clone)]
pub(crate) struct Saved {
    pub state: StorageState,
    /// The paths of the pages the sign-in went through before the one it ended on: a scenario
    /// that fails on one of them was signed out.
    pub sign_in_paths: Vec<String>,
}

/// The run's sign-ins: `[session] steps`, and the sessions saved so far.
#[derive(Default)]
pub struct SignedIn {
    /// `[session] steps`: step texts (without their keyword) that sign in.
    configured: Vec<String>,
    saved: Mutex<HashMap<String, Saved>>,
}

impl std::fmt::Debug for SignedIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignedIn").field("configured", &self.configured).finish_non_exhaustive()
    }
}

impl SignedIn {
    pub fn new(configured: Vec<String>) -> SignedIn {
        let configured = configured.into_iter().map(|step| step.trim().to_owned()).filter(|s| !s.is_empty()).collect();
        SignedIn { configured, saved: Mutex::new(HashMap::new()) }
    }

    /// The sign-in `execution` starts with: its `@session` StepSet, else the run of its first
    /// steps that `[session] steps` lists. `@api` scenarios have none (their sessions are the
    /// HTTP client's).
    pub(crate) fn sign_in_of(&self, execution: &Execution) -> Option<SignIn> {
        if execution.api {
            return None;
        }
        let (steps, name) = match &execution.session {
            Some(session) => (session.steps, session.name.clone()),
            None => {
                let steps = execution
                    .steps
                    .iter()
                    .take_while(|step| self.configured.iter().any(|listed| *listed == step.text.trim()))
                    .count();
                (steps, execution.steps.first()?.text.clone())
            }
        };
        if steps == 0 || steps > execution.steps.len() {
            return None;
        }
        let texts: Vec<&str> = execution.steps[..steps].iter().map(|step| step.text.as_str()).collect();
        Some(SignIn { steps, name, key: texts.join("\n") })
    }

    pub(crate) fn saved(&self, key: &str) -> Option<Saved> {
        lock(&self.saved).get(key).cloned()
    }

    /// Keeps `saved` under `key`, unless a session is kept there already (another worker's).
    pub(crate) fn keep(&self, key: &str, saved: Saved) {
        lock(&self.saved).entry(key.to_owned()).or_insert(saved);
    }

    /// Forgets the session under `key` if it is still `stale` (a newer one stays).
    pub(crate) fn forget(&self, key: &str, stale: &StorageState) {
        let mut saved = lock(&self.saved);
        if saved.get(key).is_some_and(|kept| kept.state == *stale) {
            saved.remove(key);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Shortest `localStorage` value masked: a token is long; a setting (`dark`, `1`) is not a
/// credential, and masking it would blank every place a page shows it.
const MASKED_STORAGE_LEN: usize = 16;

/// Every credential `state` holds goes to `masker`: each cookie value as `{cookie:NAME}`, each
/// token-like `localStorage` value as `{localStorage:KEY}`.
pub(crate) fn mask_state(masker: &mut Masker, state: &StorageState) {
    for (name, value) in state.cookies() {
        masker.add_as(value, &format!("{{cookie:{name}}}"));
    }
    for (key, value) in state.local_storage() {
        if value.chars().count() >= MASKED_STORAGE_LEN && !value.contains(char::is_whitespace) {
            masker.add_as(value, &format!("{{localStorage:{key}}}"));
        }
    }
}

/// The session `context` holds after a sign-in: its storage state, and the pages the sign-in
/// went through before the one it ended on.
pub(crate) async fn saved_of(context: &saffron_browser::Context) -> Result<Saved, String> {
    let state = context.storage_state().await.map_err(|error| format!("the session cannot be read: {error}"))?;
    let ended_on = path_of(state.url());
    let mut sign_in_paths: Vec<String> = Vec::new();
    for record in context.observed().network.iter().filter(|record| record.resource_type == "document") {
        if let Some(path) = path_of(&record.url)
            && Some(&path) != ended_on.as_ref()
            && !sign_in_paths.contains(&path)
        {
            sign_in_paths.push(path);
        }
    }
    Ok(Saved { state, sign_in_paths })
}

/// Puts `saved` into `context`. A session the application no longer takes is refused: the page
/// it loads is not where the sign-in ended (it was sent back to sign in).
pub(crate) async fn restore(context: &mut saffron_browser::Context, saved: &Saved) -> Result<(), String> {
    context.restore_storage_state(&saved.state).await.map_err(|error| format!("it could not be restored: {error}"))?;
    let now = context.url().await.ok().as_deref().and_then(path_of);
    let ended_on = path_of(saved.state.url());
    if now != ended_on {
        let now = now.unwrap_or_else(|| "another page".into());
        let ended_on = ended_on.unwrap_or_default();
        return Err(format!("the application sent the restored page to {now} instead of {ended_on}"));
    }
    Ok(())
}

/// Why a failure in `context`, which restored `saved`, says the session was stale: the page is
/// one the sign-in went through (the application sent it back to sign in), or the application
/// answered 401 to one of the page's requests.
pub(crate) async fn signed_out(context: &saffron_browser::Context, saved: &Saved) -> Option<String> {
    if let Some(path) = context.url().await.ok().as_deref().and_then(path_of)
        && saved.sign_in_paths.contains(&path)
    {
        return Some(format!("the page was {path}, which the sign-in goes through"));
    }
    context.observed().network.iter().find(|record| record.status == Some(401)).map(|record| {
        let path = path_of(&record.url).unwrap_or_default();
        format!("the application answered 401 Unauthorized to {} {path}", record.method)
    })
}

/// The path of `url` (`/login` of `http://host/login?next=/orders`).
pub(crate) fn path_of(url: &str) -> Option<String> {
    url::Url::parse(url).ok().map(|url| url.path().to_owned())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use saffron_recording::{StepKind, StepSpec};

    use super::*;

    fn execution(steps: &[&str], session: Option<SessionSteps>) -> Execution {
        let specs: Vec<StepSpec> = steps
            .iter()
            .map(|text| StepSpec { kind: StepKind::Context, text: (*text).to_owned(), table: None, doc_string: None })
            .collect();
        Execution {
            file: PathBuf::from("features/a.feature"),
            name: "a".into(),
            line: 3,
            params: Vec::new(),
            steps: specs.clone(),
            recording_path: PathBuf::new(),
            recording: Err(crate::plan::NotReplayable::Unrecorded),
            pending_proposal: None,
            held_for_review: None,
            fixture: None,
            needs_recording: false,
            template_name: "a".into(),
            template_steps: specs,
            seeding: None,
            committed: None,
            proposal_path: PathBuf::new(),
            step_origins: Vec::new(),
            api: false,
            session: session.clone(),
        }
    }

    #[test]
    fn a_session_step_set_is_the_sign_in_and_its_texts_say_who_signs_in() {
        let none = SignedIn::new(Vec::new());
        let set = Some(SessionSteps { steps: 2, name: "signed in".into() });
        let ada = execution(&["I open the sign-in page", "I sign in as \"ada\"", "I search"], set.clone());
        let sign_in = none.sign_in_of(&ada).expect("the set");
        assert_eq!((sign_in.steps, sign_in.name.as_str()), (2, "signed in"));
        let grace = execution(&["I open the sign-in page", "I sign in as \"grace\"", "I search"], set);
        assert_ne!(none.sign_in_of(&grace).expect("the set").key, sign_in.key, "another user, another session");
        assert_eq!(none.sign_in_of(&execution(&["I search"], None)), None);
        let api = Execution { api: true, ..ada };
        assert_eq!(none.sign_in_of(&api), None, "an @api scenario keeps its sessions in its HTTP client");
    }

    #[test]
    fn configured_steps_sign_in_when_a_scenario_starts_with_them() {
        let configured = SignedIn::new(vec!["I open the sign-in page".into(), " I sign in as \"ada\" ".into()]);
        let both = configured
            .sign_in_of(&execution(&["I open the sign-in page", "I sign in as \"ada\"", "I search"], None))
            .expect("listed");
        assert_eq!((both.steps, both.name.as_str()), (2, "I open the sign-in page"));
        // Listed, but not where the scenario starts: no sign-in to skip.
        assert_eq!(configured.sign_in_of(&execution(&["I search", "I sign in as \"ada\""], None)), None);
    }

    #[test]
    fn values_of_the_state_are_masked_but_settings_are_not() {
        let state = StorageState::from_parts(
            vec![("session".into(), "0123456789abcdef0123".into())],
            "http://127.0.0.1:1".into(),
            vec![("token".into(), "eyJhbGciOiJIUzI1NiJ9.e30".into()), ("theme".into(), "dark".into())],
            "http://127.0.0.1:1/orders".into(),
        );
        let mut masker = Masker::default();
        mask_state(&mut masker, &state);
        let shown = masker.mask("cookie 0123456789abcdef0123, token eyJhbGciOiJIUzI1NiJ9.e30, theme dark");
        assert_eq!(shown, "cookie {cookie:session}, token {localStorage:token}, theme dark");
    }
}
