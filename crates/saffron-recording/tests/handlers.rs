//! The handler format read through the validator: what it accepts, and where it points at a
//! problem.

use saffron_recording::{Resume, ValidationError, parse_handler};

fn problem(text: &str) -> (String, Option<(usize, usize)>) {
    match parse_handler(text) {
        Ok(handler) => panic!("accepted: {handler:?}"),
        Err(error @ ValidationError::Invalid { .. }) => (error.to_string(), error.location()),
        Err(other) => (other.to_string(), other.location()),
    }
}

#[test]
fn a_detector_with_actions_or_a_step_set_reads_and_resumes_here_by_default() {
    let consent = parse_handler(
        r#"{ "version": 1, "name": "Cookie consent",
             "detect": { "target": { "role": "dialog", "name": "Cookie consent" } },
             "actions": [ { "type": "click", "target": { "role": "button", "name": "Accept" } } ] }"#,
    )
    .expect("valid");
    assert_eq!(consent.resume, Resume::Here);
    assert_eq!(consent.actions.len(), 1);
    let expired = parse_handler(
        r#"{ "version": 1, "name": "Session expired", "detect": { "urlRegex": "^/login\\?expired=1$" },
             "stepSet": "signed in", "resume": "returnToPage" }"#,
    )
    .expect("valid");
    assert_eq!(expired.resume, Resume::ReturnToPage);
    assert_eq!(expired.step_set.as_deref(), Some("signed in"));
}

#[test]
fn each_problem_is_named_at_its_place() {
    let (message, at) = problem("{\n  \"version\": 1,\n  \"name\": \"N\",\n  \"detect\": {},\n  \"actions\": []\n}");
    assert!(message.starts_with("detect: a detector needs a target"), "{message}");
    assert_eq!(at, Some((4, 3)));

    let (message, _) = problem(r#"{ "version": 1, "name": "N", "detect": { "urlRegex": "(" }, "stepSet": "s" }"#);
    assert!(message.starts_with("detect.urlRegex: invalid regex"), "{message}");

    let (message, _) = problem(r#"{ "version": 1, "name": "N", "detect": { "urlRegex": "x" } }"#);
    assert!(message.contains("a handler needs the actions that clear the interruption"), "{message}");

    let both = r#"{ "version": 1, "name": "N", "detect": { "urlRegex": "x" }, "stepSet": "s",
                    "actions": [ { "type": "goto", "url": "/" } ] }"#;
    assert!(problem(both).0.contains("actions and stepSet are exclusive"), "{}", problem(both).0);

    let (message, _) =
        problem(r#"{ "version": 1, "name": "N", "detect": { "target": { "name": "Accept" } }, "stepSet": "s" }"#);
    assert!(message.starts_with("detect.target.name: name qualifies a role"), "{message}");

    let (message, _) =
        problem(r#"{ "version": 1, "name": "N", "detect": { "urlRegex": "x" }, "actions": [ { "type": "click" } ] }"#);
    assert!(message.starts_with("actions[0]"), "{message}");

    let (message, _) = problem(r#"{ "version": 2, "name": "N", "detect": { "urlRegex": "x" }, "stepSet": "s" }"#);
    assert!(message.contains("update saffron"), "{message}");

    let (message, _) =
        problem(r#"{ "version": 1, "name": "N", "detect": { "urlRegex": "x" }, "stepSet": "s", "resume": "later" }"#);
    assert!(message.contains("resume"), "{message}");
}
