//! `expectDownload` on `/lab/download`: a file named by a link's `download` attribute, by the
//! server's `Content-Disposition`, or made by the page's script; a download that takes a while;
//! and what a failed check says. Every context saves its files in a folder of its own, which
//! goes with it.

use crate::common;

use common::{Scenario, run};
use saffron_browser::{Browser, FailureKind};
use saffron_demo::DemoConfig;
use serde_json::{Value, json};

async fn lab(browser: &Browser) -> Scenario {
    let mut s = Scenario::start(browser, DemoConfig::default()).await;
    s.ok(json!({ "type": "goto", "url": "/lab/download" })).await;
    s
}

fn click(name: &str) -> Value {
    json!({ "type": "click", "target": { "role": "link", "name": name } })
}

fn expect_download(fields: Value) -> Value {
    let mut action = json!({ "type": "expectDownload", "timeoutMs": 5000 });
    if let (Some(action), Some(fields)) = (action.as_object_mut(), fields.as_object()) {
        action.extend(fields.clone());
    }
    action
}

/// The files in a folder, by name, with their contents.
fn files_in(folder: &std::path::Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(folder)
        .expect("the folder is there")
        .map(|entry| std::fs::read_to_string(entry.expect("an entry").path()).expect("a text file"))
        .collect();
    files.sort();
    files
}

#[test]
fn a_linked_file_is_saved_in_the_contexts_own_folder_and_checked_by_name_and_contents() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        let folder = s.context.download_folder().expect("a launched browser saves downloads").to_owned();
        // Inside the browser's profile folder: gone with it, even when the run is killed.
        let profile = browser.profile_dir().expect("a launched browser has a profile folder");
        assert!(folder.starts_with(profile), "{} is not in {}", folder.display(), profile.display());
        assert!(files_in(&folder).is_empty());
        s.ok(click("Download the report")).await;
        s.ok(expect_download(json!({ "fileName": "report.csv", "contains": "1002,Katherine Johnson" }))).await;
        s.ok(expect_download(json!({}))).await;
        assert_eq!(
            files_in(&folder),
            ["number,customer,total\n1001,Margaret Hamilton,120.00\n1002,Katherine Johnson,80.50\n"]
        );
        s.close().await;
        assert!(!folder.exists(), "the context's downloads go with it");
    });
}

#[test]
fn the_servers_name_and_a_file_the_page_makes_are_what_the_check_sees() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        s.ok(click("Invoice 1001")).await;
        s.ok(expect_download(json!({ "fileName": "invoice-1001.txt", "contains": "Invoice 1001" }))).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Export notes" } })).await;
        s.ok(expect_download(json!({ "fileNameRegex": r"^notes-\d+\.txt$", "contains": "note two" }))).await;
        s.close().await;
    });
}

#[test]
fn the_check_waits_for_a_download_to_complete() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        s.ok(click("Download the full report")).await;
        // The server sends the last rows 600 ms after the first: only the completed file has them.
        s.ok(expect_download(json!({ "fileName": "slow.csv", "contains": "end of report" }))).await;
        s.close().await;
    });
}

#[test]
fn a_missing_or_different_download_fails_saying_what_was_downloaded() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        let none = s.fails(json!({ "type": "expectDownload", "fileName": "report.csv", "timeoutMs": 300 })).await;
        assert_eq!(none.kind, FailureKind::AssertionFailed);
        assert_eq!(
            none.message,
            r#"expectDownload: expected a download named "report.csv" during the scenario within 0.3 s, found no downloads"#
        );

        s.ok(click("Download the report")).await;
        s.ok(expect_download(json!({ "fileName": "report.csv" }))).await;
        let other = s.fails(json!({ "type": "expectDownload", "fileName": "orders.csv", "timeoutMs": 300 })).await;
        assert_eq!(
            other.message,
            r#"expectDownload: expected a download named "orders.csv" during the scenario within 0.3 s, found "report.csv" (81 bytes)"#
        );
        let contents = s
            .fails(json!({ "type": "expectDownload", "fileName": "report.csv", "contains": "1003", "timeoutMs": 300 }))
            .await;
        assert_eq!(
            contents.message,
            r#"expectDownload: expected a download named "report.csv" holding "1003" during the scenario within 0.3 s, found "report.csv" (81 bytes), which does not hold "1003": it begins "number,customer,total\n1001,Margaret Hamilton,120.00\n1002,Katherine Johnson,80.50""#
        );
        assert_eq!(contents.expected.as_deref(), Some(r#"a download named "report.csv" holding "1003""#));
        s.close().await;
    });
}

#[test]
fn two_contexts_downloading_at_once_each_see_only_their_own_files() {
    run(|browser| async move {
        let mut first = lab(&browser).await;
        let mut second = lab(&browser).await;
        first.ok(click("Download the report")).await;
        second.ok(click("Invoice 1001")).await;
        first.ok(expect_download(json!({ "fileName": "report.csv" }))).await;
        second.ok(expect_download(json!({ "fileName": "invoice-1001.txt" }))).await;
        let theirs =
            first.fails(json!({ "type": "expectDownload", "fileName": "invoice-1001.txt", "timeoutMs": 300 })).await;
        assert!(theirs.message.ends_with(r#"found "report.csv" (81 bytes)"#), "{}", theirs.message);
        let folders = [first.context.download_folder(), second.context.download_folder()];
        let [Some(one), Some(two)] = folders else { panic!("both contexts save downloads") };
        assert_ne!(one, two);
        assert_eq!(files_in(one).len(), 1);
        assert_eq!(files_in(two), ["Invoice 1001\nTotal: 120.00\n"]);
        first.close().await;
        second.close().await;
    });
}
