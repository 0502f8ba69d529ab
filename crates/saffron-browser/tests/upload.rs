//! `upload` on `/lab/upload`: files chosen for a visible file input, for a hidden one through
//! its styled label, and through a button that opens a hidden input's chooser from a script, as
//! a person chooses them; and the clear failures of a target that cannot take files.

use crate::common;

use std::path::{Path, PathBuf};

use common::{Scenario, run};
use saffron_browser::{Browser, Engine, FailureKind};
use saffron_demo::DemoConfig;
use serde_json::{Value, json};

async fn lab(browser: &Browser) -> Scenario {
    let mut s = Scenario::start(browser, DemoConfig::default()).await;
    s.ok(json!({ "type": "goto", "url": "/lab/upload" })).await;
    s
}

/// Files to upload, in a folder that lives as long as the test.
struct Files {
    folder: tempfile::TempDir,
}

impl Files {
    fn new() -> Files {
        let folder = tempfile::tempdir().expect("a folder");
        std::fs::write(folder.path().join("hello.txt"), "hello world").expect("written");
        std::fs::write(folder.path().join("orders.csv"), "number,customer\n1001,Ada\n").expect("written");
        Files { folder }
    }

    fn path(&self, name: &str) -> String {
        self.folder.path().join(name).to_string_lossy().into_owned()
    }
}

fn upload(target: Value, files: &[String]) -> Value {
    json!({ "type": "upload", "target": target, "files": files, "timeoutMs": 2000 })
}

#[test]
fn a_visible_file_input_gets_the_file_and_the_events_of_a_choice() {
    run(|browser| async move {
        let files = Files::new();
        let mut s = lab(&browser).await;
        let performed = s.ok(upload(json!({ "label": "Photo" }), &[files.path("hello.txt")])).await;
        assert!(performed.drift.is_empty(), "{:?}", performed.drift);
        s.shows("files-photo", r#"hello.txt 11 text/plain "hello world""#).await;
        // The browser's own events, as after a choice in its file chooser: nothing synthetic.
        s.shows("log-photo", "input change").await;
        s.close().await;
    });
}

#[test]
fn a_hidden_input_gets_files_through_its_label_and_an_empty_list_clears_them() {
    run(|browser| async move {
        let files = Files::new();
        let mut s = lab(&browser).await;
        let picker = json!({ "text": "Attach documents" });
        s.ok(upload(picker.clone(), &[files.path("hello.txt"), files.path("orders.csv")])).await;
        s.shows(
            "files-documents",
            r#"hello.txt 11 text/plain "hello world"; orders.csv 25 text/csv "number,customer\n1001""#,
        )
        .await;
        s.ok(upload(picker, &[])).await;
        s.shows("files-documents", "No file").await;
        // Emptied as a cancelled chooser empties it, with its two events (sent by a script).
        s.shows("log-documents", "input change input(synthetic) change(synthetic)").await;
        s.close().await;
    });
}

#[test]
fn a_button_that_opens_a_chooser_is_clicked_and_its_chooser_answered() {
    run(|browser| async move {
        let files = Files::new();
        let mut s = lab(&browser).await;
        let button = json!({ "role": "button", "name": "Change avatar" });
        let performed = s.ok(upload(button.clone(), &[files.path("hello.txt")])).await;
        assert_eq!(performed.locator.as_deref(), Some(r#"role button "Change avatar""#));
        s.shows("files-avatar", r#"hello.txt 11 text/plain "hello world""#).await;
        // The page's script clicked the input (synthetic), then the chooser's answer came.
        s.shows("log-avatar", "click(synthetic) input change").await;
        if browser.config().engine == Engine::Firefox {
            // Headless Firefox never closes a chooser, and opens no second one for the page:
            // the step says so, and the page loaded again opens one.
            let again = s.fails(upload(button.clone(), &[files.path("orders.csv")])).await;
            assert!(again.message.contains("Firefox opens one file chooser per page"), "{}", again.message);
            s.ok(json!({ "type": "goto", "url": "/lab/upload" })).await;
        }
        // A second upload through the same button replaces the file.
        s.ok(upload(button, &[files.path("orders.csv")])).await;
        s.shows("files-avatar", r#"orders.csv 25 text/csv "number,customer\n1001""#).await;
        s.close().await;
    });
}

#[test]
fn targets_that_cannot_take_files_fail_with_the_reason() {
    run(|browser| async move {
        let files = Files::new();
        let mut s = lab(&browser).await;
        let one = [files.path("hello.txt")];

        let nothing = s.fails(upload(json!({ "role": "button", "name": "Does not upload" }), &one)).await;
        assert!(matches!(nothing.kind, FailureKind::NotActionable { .. }), "{nothing:?}");
        assert!(
            nothing.message.starts_with(r#"upload button "Does not upload": clicking it opened no file chooser"#),
            "{}",
            nothing.message
        );

        let text_field = s.fails(upload(json!({ "label": "Note" }), &one)).await;
        assert!(text_field.message.contains(r#"<input id="note"> is not a file input"#), "{}", text_field.message);

        let two = [files.path("hello.txt"), files.path("orders.csv")];
        let single = s.fails(upload(json!({ "label": "Photo" }), &two)).await;
        assert!(single.message.contains("takes one file (no multiple attribute), 2 were given"), "{}", single.message);
        let single_chooser = s.fails(upload(json!({ "role": "button", "name": "Change avatar" }), &two)).await;
        assert!(
            single_chooser.message.contains("its file chooser takes one file (no multiple attribute), 2 were given"),
            "{}",
            single_chooser.message
        );

        let locked = s.fails(upload(json!({ "label": "Locked" }), &one)).await;
        assert!(locked.message.contains("the file input is disabled"), "{}", locked.message);

        // Nothing failed on the way in changed a file input.
        s.shows("files-photo", "No file").await;
        s.shows("log-photo", "").await;
        s.close().await;
    });
}

#[test]
fn a_missing_file_fails_the_upload_and_names_the_file() {
    run(|browser| async move {
        let mut s = lab(&browser).await;
        let missing = Path::new("/nonexistent-saffron-upload/hello.txt");
        let failure = s.fails(upload(json!({ "label": "Photo" }), &[path_string(missing)])).await;
        assert!(failure.message.contains("hello.txt"), "{}", failure.message);
        s.shows("files-photo", "No file").await;
        s.close().await;
    });
}

fn path_string(path: &Path) -> String {
    PathBuf::from(path).to_string_lossy().into_owned()
}
