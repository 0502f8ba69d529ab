//! Tokens in a recorded action, filled in at the last moment for one step of one execution:
//! `<param>` from the Examples row, `<table:key>` from the step's table, `{env:NAME}` from the
//! environment, `{unique:name}`, `{date+N}`. Secret values come back so every output can be
//! masked; the resolved action is never written anywhere. An upload's files, relative to the
//! project folder in the recording, become the absolute paths the browser reads.

use std::path::Path;

use saffron_recording::{Action, Date, OperandKind, Resolver, Secret};

/// The values one execution shares across its steps.
pub struct ExecutionValues<'a> {
    pub params: &'a [(String, String)],
    pub unique_seed: &'a str,
    pub today: Date,
    pub env: crate::orchestrator::run::EnvLookup,
    /// The project folder, which an upload's files are relative to and must stay inside.
    pub root: &'a Path,
    /// Values kept from responses so far (`{captured:name}`), a Fixture's first.
    pub captured: &'a [(String, String)],
}

/// The action with its tokens resolved, and the secrets that went into it.
pub fn resolve_action(
    action: &Action,
    values: &ExecutionValues<'_>,
    table: Option<&Vec<Vec<String>>>,
) -> Result<(Action, Vec<Secret>), String> {
    let env = values.env.clone();
    let mut resolver = Resolver::new(values.today, values.unique_seed)
        .with_params(values.params.iter().map(|(k, v)| (k.clone(), v.clone())))
        .with_env(move |name| env(name))
        .with_captured(values.captured.iter().cloned());
    if let Some(rows) = table {
        resolver = resolver.with_table_rows(rows);
    }
    let mut resolved = action.clone();
    let mut secrets = Vec::new();
    for operand in resolved.operands_mut() {
        let value = match operand.kind {
            OperandKind::Text => resolver.resolve(operand.value),
            OperandKind::Pattern => resolver.resolve_regex(operand.value),
        }
        .map_err(|error| error.to_string())?;
        *operand.value = value.value;
        secrets.extend(value.secrets);
    }
    if let Action::Upload { files, .. } = &mut resolved {
        for file in files {
            let found = saffron_recording::upload::upload_file(values.root, file)?;
            *file = found.to_string_lossy().into_owned();
        }
    }
    Ok((resolved, secrets))
}

#[cfg(test)]
mod tests {
    use super::*;
    use saffron_recording::Target;

    fn values<'a>(
        params: &'a [(String, String)],
        env: crate::orchestrator::run::EnvLookup,
        root: &'a Path,
    ) -> ExecutionValues<'a> {
        ExecutionValues { params, unique_seed: "seed", today: Date::today_utc(), env, root, captured: &[] }
    }

    fn no_env() -> crate::orchestrator::run::EnvLookup {
        std::sync::Arc::new(|_: &str| None)
    }

    #[test]
    fn an_upload_names_the_project_file_its_tokens_fill_in_and_nothing_outside() {
        let project = tempfile::tempdir().expect("a folder");
        std::fs::create_dir(project.path().join("fixtures")).expect("made");
        std::fs::write(project.path().join("fixtures/cat.png"), "png").expect("written");
        let params = vec![("photo".to_string(), "cat.png".to_string()), ("up".to_string(), "..".to_string())];
        let values = values(&params, no_env(), project.path());
        let upload = |file: &str| Action::Upload {
            target: Target::role("button", "Photo"),
            files: vec![file.to_owned()],
            timeout_ms: None,
        };
        let (resolved, _) = resolve_action(&upload("fixtures/<photo>"), &values, None).expect("resolves");
        let expected = project.path().canonicalize().expect("the project").join("fixtures/cat.png");
        assert!(matches!(&resolved, Action::Upload { files, .. } if files == &[expected.to_string_lossy()]));
        // A value may not smuggle the path out of the project once filled in.
        let escape = resolve_action(&upload("fixtures/<up>/<up>/etc/passwd"), &values, None).expect_err("refused");
        assert!(escape.contains("may not leave the project folder"), "{escape}");
        let missing = resolve_action(&upload("fixtures/dog.png"), &values, None).expect_err("missing");
        assert!(missing.contains("does not exist"), "{missing}");
    }

    #[test]
    fn params_tables_and_secrets_are_filled_in() {
        let env: crate::orchestrator::run::EnvLookup =
            std::sync::Arc::new(|name: &str| (name == "DEMO_PASSWORD").then(|| "s3cret".to_string()));
        let params = vec![("customer".to_string(), "Ada".to_string())];
        let values = values(&params, env, Path::new("."));
        let fill = Action::Fill {
            target: Target::role("textbox", "Customer"),
            value: "<table:Customer>".into(),
            timeout_ms: None,
        };
        let table = vec![vec!["Customer".to_string(), "<customer>".to_string()]];
        // The pickle's table already has row values in it.
        let row_table = vec![vec!["Customer".to_string(), "Ada".to_string()]];
        let (resolved, secrets) = resolve_action(&fill, &values, Some(&row_table)).expect("resolves");
        assert_eq!(
            resolved,
            Action::Fill { target: Target::role("textbox", "Customer"), value: "Ada".into(), timeout_ms: None }
        );
        assert!(secrets.is_empty());
        let _ = table;

        let password = Action::Fill {
            target: Target::role("textbox", "Password"),
            value: "{env:DEMO_PASSWORD}".into(),
            timeout_ms: None,
        };
        let (resolved, secrets) = resolve_action(&password, &values, None).expect("resolves");
        assert!(matches!(resolved, Action::Fill { value, .. } if value == "s3cret"));
        assert_eq!(secrets.len(), 1);

        let missing =
            Action::Fill { target: Target::role("textbox", "X"), value: "{env:NOPE}".into(), timeout_ms: None };
        assert!(resolve_action(&missing, &values, None).is_err());
    }

    #[test]
    fn tokens_inside_a_scope_are_resolved_and_escaped_in_patterns() {
        let params = vec![("order".to_string(), "1002 (rush)".to_string())];
        let values = values(&params, no_env(), Path::new("."));
        let scoped = |has_text: Option<&str>, has_text_regex: Option<&str>| Action::Check {
            target: Target {
                role: Some("checkbox".into()),
                within: Some(Box::new(saffron_recording::Scope {
                    container: Target { role: Some("row".into()), name: Some("<order>".into()), ..Target::default() },
                    has_text: has_text.map(str::to_owned),
                    has_text_regex: has_text_regex.map(str::to_owned),
                })),
                ..Target::default()
            },
            timeout_ms: None,
        };
        let (resolved, _) = resolve_action(&scoped(Some("Order <order>"), None), &values, None).expect("resolves");
        assert_eq!(resolved, scoped_with("1002 (rush)", Some("Order 1002 (rush)"), None));
        let (resolved, _) = resolve_action(&scoped(None, Some("^Order <order>$")), &values, None).expect("resolves");
        assert_eq!(resolved, scoped_with("1002 (rush)", None, Some(r"^Order 1002 \(rush\)$")));

        fn scoped_with(name: &str, has_text: Option<&str>, has_text_regex: Option<&str>) -> Action {
            Action::Check {
                target: Target {
                    role: Some("checkbox".into()),
                    within: Some(Box::new(saffron_recording::Scope {
                        container: Target { role: Some("row".into()), name: Some(name.into()), ..Target::default() },
                        has_text: has_text.map(str::to_owned),
                        has_text_regex: has_text_regex.map(str::to_owned),
                    })),
                    ..Target::default()
                },
                timeout_ms: None,
            }
        }
    }
}
