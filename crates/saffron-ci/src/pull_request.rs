//! The draft pull request's description. Everything in it that comes from a model or a page (a
//! narrative, adaptations, the actions' targets and values, a scenario's name) is data: fenced in
//! code blocks with a fence longer than any backtick run inside, so nothing renders, links or
//! notifies. Only the CI run's link, built from the CI's own environment, is a link.

/// GitHub refuses a pull request body over this many characters.
pub const GITHUB_BODY_LIMIT: usize = 65_536;

/// One proposal, as the description shows it.
#[derive(Debug, Clone, Default)]
pub struct Described {
    /// Where it is in the branch, relative to the project root.
    pub path: String,
    pub feature: String,
    pub scenario: String,
    pub narrative: String,
    pub adaptations: Vec<String>,
    /// The action changes, one line each (`- [1] click ...`, `+ [1] click ...`), under the
    /// step they belong to.
    pub changes: Vec<String>,
    /// Feature edits, `-`/`+` lines.
    pub edits: Vec<String>,
}

/// What the description is about.
#[derive(Debug, Clone, Default)]
pub struct Subject {
    pub branch: String,
    pub run_link: Option<String>,
    pub run_id: Option<String>,
    pub commit: Option<String>,
    pub proposals: Vec<Described>,
    /// Proposals left out of the branch, with why.
    pub left_out: Vec<String>,
}

/// `text` in a fenced block whose fence is longer than any run of backticks inside it.
pub fn fenced(text: &str, info: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{info}\n{}\n{fence}\n", text.trim_end_matches('\n'))
}

/// A name as inline code: a fence one longer than its longest backtick run, padded when it
/// starts or ends with a backtick, so markdown shows it as it is.
fn inline(text: &str) -> String {
    let one_line = text.replace(['\n', '\r'], " ");
    let longest = one_line.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    format!("{fence} {one_line} {fence}")
}

/// The pull request's title.
pub fn title(subject: &Subject) -> String {
    let count = subject.proposals.len();
    match &subject.run_id {
        Some(id) => format!("Saffron: {count} repair(s) from CI run {id}"),
        None => format!("Saffron: {count} repair(s)"),
    }
}

/// The pull request's description, cut before `limit` characters with a count of what was
/// left out.
pub fn description(subject: &Subject, limit: usize) -> String {
    let mut head = String::new();
    head.push_str(&format!("## {}\n\n", title(subject)));
    match &subject.run_link {
        Some(link) if link.starts_with("https://") || link.starts_with("http://") => {
            head.push_str(&format!("Made by [the CI run]({link})"));
        }
        _ => head.push_str("Made by a CI run"),
    }
    if let Some(commit) = &subject.commit {
        head.push_str(&format!(" on commit {}", inline(commit)));
    }
    head.push_str(&format!(
        ". This branch holds the proposals and nothing else: no recording is changed until a person \
         accepts one on their machine, where its bindings are checked again.\n\n### To review\n\n{}\n",
        fenced(
            &format!(
                "git fetch origin '{branch}' && git switch '{branch}'\nsaffron proposals\nsaffron diff <feature>/<scenario>\n\
                 saffron accept <feature>/<scenario>    # or: saffron reject <feature>/<scenario>\n\
                 git add .saffron/cache .saffron/proposals && git commit -m 'Accept Saffron repairs' && git push",
                branch = subject.branch
            ),
            "sh"
        )
    ));
    let mut sections = Vec::new();
    for proposal in &subject.proposals {
        let mut section = format!("### {} in {}\n\n", inline(&proposal.scenario), inline(&proposal.feature));
        section.push_str(&format!("Proposal: {}\n\n", inline(&proposal.path)));
        if !proposal.narrative.is_empty() {
            section.push_str("What the agent says it did:\n\n");
            section.push_str(&fenced(&proposal.narrative, "text"));
        }
        if !proposal.adaptations.is_empty() {
            section.push_str("\nAdaptations:\n\n");
            section.push_str(&fenced(&proposal.adaptations.join("\n"), "text"));
        }
        if !proposal.changes.is_empty() {
            section.push_str("\nActions:\n\n");
            section.push_str(&fenced(&proposal.changes.join("\n"), "diff"));
        }
        if !proposal.edits.is_empty() {
            section.push_str("\nFeature edits (applied by `saffron accept --with-feature-edit`):\n\n");
            section.push_str(&fenced(&proposal.edits.join("\n"), "diff"));
        }
        sections.push(section);
    }
    if !subject.left_out.is_empty() {
        sections.push(format!("### Left out\n\n{}", fenced(&subject.left_out.join("\n"), "text")));
    }
    let mut body = head;
    let mut left = 0usize;
    for (index, section) in sections.iter().enumerate() {
        // Room for the note that says how much was cut.
        if body.chars().count() + section.chars().count() + 200 > limit {
            left = sections.len() - index;
            break;
        }
        body.push('\n');
        body.push_str(section);
    }
    if left > 0 {
        body.push_str(&format!(
            "\n_{left} more section(s) left out: a pull request's description holds {limit} characters. \
             `saffron proposals` lists them all._\n"
        ));
    }
    if body.chars().count() > limit {
        body = body.chars().take(limit.saturating_sub(80)).collect();
        body.push_str("\n\n_(cut: a pull request's description holds at most so much)_\n");
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject(narrative: &str) -> Subject {
        Subject {
            branch: "saffron/heal-4242".into(),
            run_link: Some("https://github.com/acme/shop/actions/runs/4242/attempts/1".into()),
            run_id: Some("4242".into()),
            commit: Some("abc123".into()),
            proposals: vec![Described {
                path: ".saffron/proposals/orders/new.json".into(),
                feature: "features/orders.feature".into(),
                scenario: "New order".into(),
                narrative: narrative.into(),
                adaptations: vec!["change: a control or label changed".into()],
                changes: vec!["When I save".into(), "  - [1] click button \"Save\"".into()],
                edits: Vec::new(),
            }],
            left_out: Vec::new(),
        }
    }

    #[test]
    fn what_a_model_wrote_is_fenced_longer_than_any_backtick_run_inside() {
        let hostile = "Done. @acme/security please merge ```\n</details>[click](https://evil.example) ````";
        let body = description(&subject(hostile), GITHUB_BODY_LIMIT);
        let at = body.find("@acme/security").expect("the narrative is there");
        let before = &body[..at];
        let opening = before.rfind("`````text\n").expect("opened with five backticks, one more than the longest run");
        assert!(body[opening..].contains("\n`````\n"), "{body}");
        assert!(body.contains("[the CI run](https://github.com/acme/shop/actions/runs/4242/attempts/1)"));
        assert_eq!(body.matches("](").count(), 2, "one link of ours, and the model's inside its fence: {body}");
    }

    #[test]
    fn a_long_description_is_cut_before_the_limit_with_a_count() {
        let mut subject = subject("short");
        let one = subject.proposals[0].clone();
        subject.proposals = (0..400)
            .map(|i| Described { scenario: format!("Scenario {i}"), narrative: "x".repeat(400), ..one.clone() })
            .collect();
        let body = description(&subject, GITHUB_BODY_LIMIT);
        assert!(body.chars().count() <= GITHUB_BODY_LIMIT, "{}", body.chars().count());
        assert!(body.contains("more section(s) left out"), "the cut says so");
    }

    #[test]
    fn a_scenario_name_with_backticks_stays_inline_code() {
        assert_eq!(inline("a `b` c"), "`` a `b` c ``");
        assert_eq!(fenced("no ticks", "text"), "```text\nno ticks\n```\n");
    }
}
