//! The orchestrator's replay through a fake medium with no browser: what it decides whatever
//! the medium says.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use saffron_recording::{Action, RecordedStep, Recording, StepSpec, Target};

use super::*;
use crate::heal::ESCALATING;
use crate::medium::{Done, Evidence, Failure};
use crate::plan::NotReplayable;

/// What the fake medium does with the `n`th attempt (from 0) of an action.
#[derive(Clone)]
enum Play {
    Pass,
    Fail(FailureClass),
    /// An interruption cleared; the step is taken up again from `next`.
    Clear {
        next: usize,
    },
    /// The medium goes away while the action runs.
    Lose,
}

#[derive(Default)]
struct Script {
    /// By (step, action): the plays of its attempts in order; past the end, it passes.
    plays: HashMap<(usize, usize), Vec<Play>>,
    attempts: HashMap<(usize, usize), usize>,
    lost: Option<String>,
    /// What the medium was asked, in order.
    log: Vec<String>,
    /// Why a restored session is not taken, if it is not.
    refuse_restore: Option<String>,
    /// What the medium says of a failure after a restored session.
    signed_out: Option<String>,
    /// Sessions saved so far.
    saves: usize,
}

#[derive(Clone, Default)]
struct FakeMedium(Rc<RefCell<Script>>);

impl FakeMedium {
    fn with(plays: &[((usize, usize), Vec<Play>)]) -> FakeMedium {
        let medium = FakeMedium::default();
        medium.0.borrow_mut().plays = plays.iter().cloned().collect();
        medium
    }

    fn log(&self) -> Vec<String> {
        self.0.borrow().log.clone()
    }
}

struct FakeLive(Rc<RefCell<Script>>);

impl Medium for FakeMedium {
    type Live = FakeLive;

    async fn open(&self, _: &Execution, _: &RunOptions, _: crate::trace::TraceKind) -> Result<FakeLive, String> {
        self.0.borrow_mut().log.push("open".into());
        Ok(FakeLive(Rc::clone(&self.0)))
    }

    async fn lost(&self) -> Option<String> {
        self.0.borrow().lost.clone()
    }
}

impl Live for FakeLive {
    type Detail = String;

    fn mark(&self) -> u64 {
        0
    }

    fn begin_step(&mut self) {}

    fn end_step(&mut self, _: &StepResult, _: u64) {}

    async fn perform(&mut self, at: &ActionAt<'_>, _: &mut Masker) -> Outcome<String> {
        let mut script = self.0.borrow_mut();
        let key = (at.step, at.action);
        let attempt = *script.attempts.entry(key).and_modify(|n| *n += 1).or_insert(0);
        script.log.push(format!("perform {}.{} {}", at.step + 1, at.action + 1, at.resolved));
        let play = script.plays.get(&key).and_then(|plays| plays.get(attempt)).cloned().unwrap_or(Play::Pass);
        let failure = |class| {
            Outcome::Failed(Failure {
                class,
                reason: "it did not work".into(),
                found_by: String::new(),
                locator: None,
                attempts: 1,
                waited: Vec::new(),
                detail: format!("failure of {}.{}", at.step + 1, at.action + 1),
            })
        };
        match play {
            Play::Pass => Outcome::Done(Box::new(Done {
                report: failed_action(at.recorded, None, 0, String::new()).passed(),
                drift: Vec::new(),
                refresh: None,
                captured: Vec::new(),
            })),
            Play::Fail(class) => failure(class),
            Play::Clear { next } => Outcome::Cleared { name: "cookie banner".into(), next },
            Play::Lose => {
                script.lost = Some("the medium went away".into());
                failure(FailureClass::Application)
            }
        }
    }

    async fn evidence(&mut self, at: &ActionAt<'_>, _: &Masker) -> Evidence {
        self.0.borrow_mut().log.push(format!("evidence {}.{}", at.step + 1, at.action + 1));
        Evidence { url: Some("fake://here".into()), ..Evidence::default() }
    }

    async fn failed(&mut self, _: &str, _: &Evidence, _: &Masker) {}

    fn finish(&mut self, _: &Verdict, _: u64) -> Option<Trace> {
        None
    }

    async fn restore_session(&mut self, saved: &Saved) -> Result<(), String> {
        let mut script = self.0.borrow_mut();
        script.log.push(format!("restore {}", saved.state.url()));
        script.refuse_restore.clone().map_or(Ok(()), Err)
    }

    async fn save_session(&mut self) -> Result<Saved, String> {
        let mut script = self.0.borrow_mut();
        script.saves += 1;
        script.log.push("save".into());
        Ok(session_number(script.saves))
    }

    async fn signed_out(&mut self, _: &Saved) -> Option<String> {
        self.0.borrow().signed_out.clone()
    }

    async fn close(self) {
        self.0.borrow_mut().log.push("close".into());
    }
}

/// The `n`th session the fake medium saved: its address says which.
fn session_number(n: usize) -> Saved {
    let state = saffron_browser::StorageState::from_parts(
        vec![("session".into(), format!("token-number-{n}"))],
        "fake://here".into(),
        Vec::new(),
        format!("fake://here/session-{n}"),
    );
    Saved { state, sign_in_paths: vec!["/login".into()] }
}

impl ActionResult {
    fn passed(mut self) -> ActionResult {
        self.passed = true;
        self.notes.clear();
        self
    }
}

fn save() -> Action {
    Action::Click { target: Target::role("button", "Save"), timeout_ms: None }
}

fn saved() -> Action {
    Action::ExpectVisible { target: Target::role("status", "Saved"), timeout_ms: None }
}

/// A scenario: When I save (fill, click), Then it is saved (a check), Then the total shows.
fn execution(fill_value: &str) -> Execution {
    let fill = Action::Fill { target: Target::role("textbox", "Name"), value: fill_value.into(), timeout_ms: None };
    let steps = vec![
        RecordedStep::new(StepSpec::new(StepKind::Action, "I save the order"), vec![fill, save()]),
        RecordedStep::new(StepSpec::new(StepKind::Outcome, "it is saved"), vec![saved()]),
        RecordedStep::new(StepSpec::new(StepKind::Outcome, "the total shows"), vec![saved()]),
    ];
    let specs: Vec<StepSpec> = steps.iter().map(RecordedStep::spec).collect();
    let recording = Recording::new("features/orders.feature", "Save an order", steps);
    Execution {
        file: PathBuf::from("features/orders.feature"),
        name: "Save an order".into(),
        line: 2,
        params: Vec::new(),
        steps: specs.clone(),
        recording_path: PathBuf::from(".saffron/cache/orders/save-an-order.json"),
        recording: Ok(recording.clone()),
        pending_proposal: None,
        held_for_review: None,
        fixture: None,
        needs_recording: false,
        template_name: "Save an order".into(),
        template_steps: specs,
        seeding: None,
        committed: Some(recording),
        proposal_path: PathBuf::from(".saffron/proposals/orders/save-an-order.json"),
        step_origins: Vec::new(),
        api: false,
        session: None,
    }
}

fn options() -> RunOptions {
    crate::session::options_with_env(&std::env::temp_dir(), vec![("PASS".into(), "hunter2-secret".into())])
}

fn replay(medium: &FakeMedium, execution: &Execution, mode: ReplayMode) -> Replay<FakeLive> {
    futures::executor::block_on(replay_in(medium, execution, &options(), Masker::new(), mode, &[]))
}

fn red_message(replay: &Replay<FakeLive>) -> String {
    match &replay.outcome.verdict {
        Verdict::Red { message, .. } => message.clone(),
        other => panic!("not red: {other:?}"),
    }
}

#[test]
fn a_failed_then_step_is_run_again_as_recorded_and_never_handed_to_a_repair_whatever_the_medium_calls_it() {
    // The medium calls the check's failure the application's, as it would an action's.
    let medium = FakeMedium::with(&[((1, 0), vec![Play::Fail(FailureClass::Application); 2])]);
    let replayed = replay(&medium, &execution("Ada"), ESCALATING);
    assert!(red_message(&replayed).contains("failed again when re-run as recorded"), "{}", red_message(&replayed));
    assert!(replayed.stopped.is_none(), "a failed Then step is never repaired");
    let log = medium.log();
    assert_eq!(log.iter().filter(|line| line.starts_with("perform 2.1")).count(), 2, "{log:?}");
    assert_eq!(log.last().map(String::as_str), Some("close"), "the execution is closed: {log:?}");
    let outcomes: Vec<StepOutcome> = replayed.outcome.steps.iter().map(|step| step.outcome).collect();
    assert_eq!(outcomes, [StepOutcome::Passed, StepOutcome::Failed, StepOutcome::Skipped]);
    assert_eq!(replayed.outcome.url.as_deref(), Some("fake://here"), "the evidence of the last attempt");
}

#[test]
fn a_then_step_that_passes_when_run_again_lets_the_replay_go_on() {
    let medium = FakeMedium::with(&[((1, 0), vec![Play::Fail(FailureClass::Application), Play::Pass])]);
    let replayed = replay(&medium, &execution("Ada"), ESCALATING);
    assert_eq!(replayed.outcome.verdict, Verdict::Green);
    let notes = &replayed.outcome.steps[1].actions[0].notes;
    assert_eq!(notes, &["failed once, passed when re-run as recorded".to_string()]);
    // Without the guard (a proof replay), the first failure stands.
    let medium = FakeMedium::with(&[((1, 0), vec![Play::Fail(FailureClass::Application), Play::Pass])]);
    let replayed = replay(&medium, &execution("Ada"), ReplayMode::default());
    assert!(matches!(replayed.outcome.verdict, Verdict::Red { step: Some(2), .. }));
}

#[test]
fn a_failed_action_stops_the_replay_with_the_execution_open_for_a_repair() {
    let medium = FakeMedium::with(&[((0, 1), vec![Play::Fail(FailureClass::Application)])]);
    let replayed = replay(&medium, &execution("Ada"), ESCALATING);
    let stop = replayed.stopped.as_ref().expect("stopped for a repair");
    assert_eq!((stop.step, stop.action, stop.detail.as_str()), (0, 1, "failure of 1.2"));
    assert!(!medium.log().contains(&"close".to_string()), "kept open");
    // Without keep_live, closed and not stopped.
    let medium = FakeMedium::with(&[((0, 1), vec![Play::Fail(FailureClass::Application)])]);
    let replayed = replay(&medium, &execution("Ada"), ReplayMode::default());
    assert!(replayed.stopped.is_none() && medium.log().contains(&"close".to_string()));
}

#[test]
fn a_refused_action_and_an_interruption_nobody_cleared_are_never_repaired() {
    for class in [FailureClass::Refused, FailureClass::Interrupted] {
        let medium = FakeMedium::with(&[((0, 1), vec![Play::Fail(class)])]);
        let replayed = replay(&medium, &execution("Ada"), ESCALATING);
        assert!(matches!(replayed.outcome.verdict, Verdict::Red { step: Some(1), .. }), "{class:?}");
        assert!(replayed.stopped.is_none(), "{class:?}");
    }
}

#[test]
fn a_medium_that_went_away_makes_the_scenario_blocked_without_evidence() {
    let medium = FakeMedium::with(&[((0, 1), vec![Play::Lose])]);
    let replayed = replay(&medium, &execution("Ada"), ESCALATING);
    let Verdict::Blocked { cause } = &replayed.outcome.verdict else { panic!("{:?}", replayed.outcome.verdict) };
    assert!(cause.contains("step 1") && cause.contains("the medium went away"), "{cause}");
    assert!(replayed.stopped.is_none());
    assert!(!medium.log().iter().any(|line| line.starts_with("evidence")), "{:?}", medium.log());
}

#[test]
fn a_cleared_interruption_takes_the_step_up_again() {
    let medium = FakeMedium::with(&[((0, 1), vec![Play::Clear { next: 0 }])]);
    let replayed = replay(&medium, &execution("Ada"), ESCALATING);
    assert_eq!(replayed.outcome.verdict, Verdict::Green);
    let first = &replayed.outcome.steps[0];
    assert_eq!(first.cleared, ["cookie banner"]);
    assert_eq!(first.actions.len(), 2, "the step's actions once each in the report");
    let performed: Vec<String> = medium.log().into_iter().filter(|line| line.starts_with("perform 1.")).collect();
    assert_eq!(performed.len(), 4, "fill, click (interrupted), fill, click: {performed:?}");
    assert_eq!(replayed.outcome.cleared, ["step 1 \"I save the order\": cleared: cookie banner"]);
}

#[test]
fn tokens_are_filled_in_for_the_medium_and_an_unresolvable_one_is_red_before_it_is_asked() {
    let medium = FakeMedium::default();
    let replayed = replay(&medium, &execution("{env:PASS}"), ESCALATING);
    assert_eq!(replayed.outcome.verdict, Verdict::Green);
    assert!(medium.log().iter().any(|line| line.contains("hunter2-secret")), "the medium gets the value");
    assert!(replayed.masker.mask("hunter2-secret") != "hunter2-secret", "and the masker knows it");
    assert!(replayed.outcome.steps[0].actions[0].action.contains("{env:PASS}"), "the report shows the token");

    let medium = FakeMedium::default();
    let replayed = replay(&medium, &execution("{env:NOT_SET_ANYWHERE_42}"), ESCALATING);
    assert!(red_message(&replayed).starts_with("cannot resolve"), "{}", red_message(&replayed));
    assert!(!medium.log().iter().any(|line| line.starts_with("perform")), "{:?}", medium.log());
}

#[test]
fn a_recording_that_cannot_be_replayed_is_red_before_the_medium_is_opened() {
    let medium = FakeMedium::default();
    let stale = Execution { recording: Err(NotReplayable::Stale), ..execution("Ada") };
    let replayed = replay(&medium, &stale, ESCALATING);
    assert!(red_message(&replayed).contains("the scenario changed since it was recorded"));
    assert!(medium.log().is_empty(), "{:?}", medium.log());
}

#[test]
fn a_pending_proposal_that_passes_is_yellow_and_one_that_fails_says_so() {
    let pending = || Execution { pending_proposal: Some(PathBuf::from("p.json")), ..execution("Ada") };
    let replayed = replay(&FakeMedium::default(), &pending(), ESCALATING);
    assert_eq!(replayed.outcome.verdict, Verdict::Yellow { proposal: "p.json".into() });
    let medium = FakeMedium::with(&[((0, 0), vec![Play::Fail(FailureClass::Refused)])]);
    let replayed = replay(&medium, &pending(), ESCALATING);
    assert!(red_message(&replayed).ends_with("(replaying the pending proposal p.json)"));
}

/// A scenario that starts with a sign-in: Given I sign in (fill), When I save the order (fill,
/// click), Then it is saved.
fn signing_in() -> Execution {
    let sign_in = Action::Fill { target: Target::role("textbox", "Email"), value: "ada".into(), timeout_ms: None };
    let fill = Action::Fill { target: Target::role("textbox", "Name"), value: "Ada".into(), timeout_ms: None };
    let steps = vec![
        RecordedStep::new(StepSpec::new(StepKind::Context, "I sign in as \"ada\""), vec![sign_in]),
        RecordedStep::new(StepSpec::new(StepKind::Action, "I save the order"), vec![fill, save()]),
        RecordedStep::new(StepSpec::new(StepKind::Outcome, "it is saved"), vec![saved()]),
    ];
    let specs: Vec<StepSpec> = steps.iter().map(RecordedStep::spec).collect();
    let recording = Recording::new("features/orders.feature", "Save an order", steps);
    Execution {
        steps: specs.clone(),
        template_steps: specs,
        recording: Ok(recording.clone()),
        committed: Some(recording),
        session: Some(crate::SessionSteps { steps: 1, name: "signed in".into() }),
        ..execution("Ada")
    }
}

fn replay_with(medium: &FakeMedium, execution: &Execution, options: &RunOptions, mode: ReplayMode) -> Replay<FakeLive> {
    futures::executor::block_on(replay_in(medium, execution, options, Masker::new(), mode, &[]))
}

fn session_of(replay: &Replay<FakeLive>) -> crate::SessionUse {
    replay.outcome.session.clone().expect("the scenario starts with a sign-in")
}

#[test]
fn the_first_scenario_signs_in_and_keeps_its_session_and_the_next_restores_it_instead() {
    let options = options();
    let medium = FakeMedium::default();
    let first = replay_with(&medium, &signing_in(), &options, crate::orchestrator::run::REPLAY);
    assert!(first.outcome.is_green());
    assert!(!session_of(&first).restored);
    assert_eq!(medium.log()[..3], ["open", "perform 1.1 fill textbox \"Email\" with \"ada\"", "save"]);
    let second_medium = FakeMedium::default();
    let second = replay_with(&second_medium, &signing_in(), &options, crate::orchestrator::run::REPLAY);
    assert!(second.outcome.is_green());
    assert!(session_of(&second).restored);
    let log = second_medium.log();
    assert_eq!(log[..2], ["open", "restore fake://here/session-1"]);
    assert!(!log.iter().any(|line| line.starts_with("perform 1.")), "the sign-in's actions are skipped: {log:?}");
    let step = &second.outcome.steps[0];
    assert!(step.restored && step.outcome == StepOutcome::Passed && step.actions.is_empty(), "{step:?}");
    // The session's values are the masker's: a page that shows the token shows it masked.
    assert_eq!(second.masker.mask("token-number-1"), "{cookie:session}");
    // Another user is another session; a proof performs the sign-in whatever is kept.
    let proof_medium = FakeMedium::default();
    let proof = replay_with(&proof_medium, &signing_in(), &options, ReplayMode::default());
    assert!(proof.outcome.session.is_none());
    assert!(proof_medium.log().iter().any(|line| line.starts_with("perform 1.1")));
}

#[test]
fn a_failure_after_a_restored_session_that_was_signed_out_runs_the_scenario_again_signing_in_and_is_never_repaired() {
    let options = options();
    let sign_in = options.signed_in.sign_in_of(&signing_in()).expect("a sign-in");
    options.signed_in.keep(&sign_in.key, session_number(7));
    // Step 2 fails once (the app sent the page back to sign in); the medium says it was signed out.
    let medium = FakeMedium::with(&[((1, 0), vec![Play::Fail(FailureClass::Application)])]);
    medium.0.borrow_mut().signed_out = Some("the page was /login, which the sign-in goes through".into());
    let replayed = replay_with(&medium, &signing_in(), &options, ESCALATING);
    assert!(replayed.outcome.is_green(), "{:?}", replayed.outcome.verdict);
    assert!(replayed.stopped.is_none(), "a stale session is never handed to a repair");
    let session = session_of(&replayed);
    assert!(!session.restored, "the second run signed in");
    assert_eq!(session.stale.as_deref(), Some("the page was /login, which the sign-in goes through"));
    let log = medium.log();
    let restore = log.iter().position(|line| line == "restore fake://here/session-7").expect("restored first");
    let reopened = log.iter().rposition(|line| line == "open").expect("opened again");
    assert!(restore < reopened && log[reopened + 1].starts_with("perform 1.1"), "{log:?}");
    // The stale session is gone; the new one is kept for the next scenario.
    let kept = options.signed_in.saved(&sign_in.key).expect("a session is kept");
    assert_eq!(kept.state.url(), "fake://here/session-1");
}

#[test]
fn a_red_scenario_whose_restored_session_holds_is_red_as_it_is_and_may_be_repaired() {
    let options = options();
    let sign_in = options.signed_in.sign_in_of(&signing_in()).expect("a sign-in");
    options.signed_in.keep(&sign_in.key, session_number(7));
    let medium = FakeMedium::with(&[((1, 0), vec![Play::Fail(FailureClass::Application)])]);
    let replayed = replay_with(&medium, &signing_in(), &options, ESCALATING);
    assert!(matches!(replayed.outcome.verdict, Verdict::Red { step: Some(2), .. }), "{:?}", replayed.outcome.verdict);
    assert!(replayed.stopped.is_some(), "the failure is the application's: a repair may take it over");
    assert!(session_of(&replayed).restored && session_of(&replayed).stale.is_none());
    assert_eq!(medium.log().iter().filter(|line| *line == "open").count(), 1, "not run again");
}

#[test]
fn a_kept_session_the_application_refuses_is_forgotten_and_the_scenario_signs_in() {
    let options = options();
    let sign_in = options.signed_in.sign_in_of(&signing_in()).expect("a sign-in");
    options.signed_in.keep(&sign_in.key, session_number(7));
    let medium = FakeMedium::default();
    medium.0.borrow_mut().refuse_restore = Some("the application sent the restored page to /login".into());
    let replayed = replay_with(&medium, &signing_in(), &options, crate::orchestrator::run::REPLAY);
    assert!(replayed.outcome.is_green());
    let session = session_of(&replayed);
    assert!(!session.restored);
    assert_eq!(session.stale.as_deref(), Some("the application sent the restored page to /login"));
    assert!(medium.log().iter().any(|line| line.starts_with("perform 1.1")), "signed in: {:?}", medium.log());
    assert_eq!(options.signed_in.saved(&sign_in.key).expect("kept").state.url(), "fake://here/session-1");
}
