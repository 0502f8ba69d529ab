use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use super::*;
use crate::action::Action;
use crate::model::{RecordedStep, StepKind, StepSpec};
use crate::proposal::{ProposalDraft, ScenarioRef};
use crate::slug::{feature_slug, scenario_slugs};
use crate::target::Target;

fn recording(scenario: &str) -> Recording {
    Recording::new(
        "features/shop/Cart Checkout.feature",
        scenario,
        vec![RecordedStep::new(
            StepSpec::new(StepKind::Action, "I check out"),
            vec![Action::Click { target: Target::role("button", "Check out"), timeout_ms: None }],
        )],
    )
}

fn temporary_files(directory: &Path) -> Vec<String> {
    fs::read_dir(directory)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.contains(".tmp-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn open_creates_nothing_and_paths_use_slugs() {
    let project = tempfile::tempdir().expect("temp dir");
    let store = Store::open(project.path()).expect("opens");
    assert!(!project.path().join(".saffron").exists(), "opening the store must not write");
    assert!(store.load_recordings().found.is_empty() && store.load_recordings().unreadable.is_empty());
    assert!(store.load_proposals().unreadable.is_empty());
    assert!(!project.path().join(".saffron").exists(), "reading the store must not write");
    assert_eq!(store.reports_dir(), project.path().join(".saffron/reports"));
    assert_eq!(store.artifacts_dir(), project.path().join(".saffron/artifacts"));
    let feature = feature_slug("features/shop/Cart Checkout.feature");
    let scenarios = scenario_slugs(&["Pay", "Pay"]);
    let path = store.recording_path(&feature, &scenarios[1]);
    assert_eq!(path, project.path().join(".saffron/cache/shop-cart-checkout/pay-2.json"));
    assert_eq!(store.relative_path(&path).as_deref(), Some(".saffron/cache/shop-cart-checkout/pay-2.json"));
    assert_eq!(
        store.proposal_path(&feature, "pay"),
        project.path().join(".saffron/proposals/shop-cart-checkout/pay.json")
    );
    assert_eq!(store.relative_path(Path::new("/elsewhere/x.json")), None);
    // The first write creates the folders it needs, lock included.
    store.write_recording(&path, &recording("Pay")).expect("writes");
    assert!(path.is_file());
    assert!(project.path().join(".saffron/.lock").is_file());
}

#[test]
fn recordings_round_trip_as_pretty_json_with_a_trailing_newline() {
    let project = tempfile::tempdir().expect("temp dir");
    let store = Store::open(project.path()).expect("opens");
    let path = store.recording_path("shop-cart-checkout", "pay");
    let original = recording("Pay");
    store.write_recording(&path, &original).expect("writes");
    let text = fs::read_to_string(&path).expect("reads");
    assert!(text.ends_with("}\n") && !text.ends_with("\n\n"));
    assert!(text.starts_with("{\n  \"version\": 1,\n  \"feature\": "), "{text}");
    assert_eq!(store.read_recording(&path).expect("valid"), original);
    // Rewriting the same recording is byte-identical.
    store.write_recording(&path, &original).expect("writes");
    assert_eq!(fs::read_to_string(&path).expect("reads"), text);
    assert!(temporary_files(path.parent().expect("parent")).is_empty());
}

#[test]
fn an_invalid_recording_is_never_written() {
    let project = tempfile::tempdir().expect("temp dir");
    let store = Store::open(project.path()).expect("opens");
    let path = store.recording_path("f", "s");
    let mut broken = recording("S");
    broken.steps[0].actions[0] = Action::Click { target: Target::default(), timeout_ms: None };
    let error = store.write_recording(&path, &broken).expect_err("refused");
    assert!(
        error.to_string().ends_with(
            "steps[0].actions[0].target: a target needs at least one of role, label, placeholder, text, testId or css"
        ),
        "{error}"
    );
    assert!(!path.exists());
}

#[test]
fn proposals_round_trip_and_are_removed_under_the_lock() {
    let project = tempfile::tempdir().expect("temp dir");
    let store = Store::open(project.path()).expect("opens");
    let committed = recording("Pay");
    let mut healed = committed.clone();
    healed.steps[0].actions[0] = Action::Click { target: Target::role("button", "Pay now"), timeout_ms: None };
    let proposal = Proposal::file(
        ProposalDraft {
            scenario: ScenarioRef {
                feature: committed.feature.clone(),
                name: "Pay".into(),
                cache_path: ".saffron/cache/shop-cart-checkout/pay.json".into(),
            },
            recording: healed,
            feature_edits: vec![],
            narrative: String::new(),
            adaptations: vec![],
            usage: None,
            filed_at: None,
            unverified: None,
        },
        Some(&committed),
    );
    let path = store.proposal_path("shop-cart-checkout", "pay");
    store.write_proposal(&path, &proposal).expect("writes");
    assert_eq!(store.read_proposal(&path).expect("valid"), proposal);
    let scan = store.load_proposals();
    assert_eq!(scan.found.len(), 1);
    let lock = store.lock().expect("locks");
    lock.remove(&path).expect("removes");
    lock.remove(&path).expect("removing again is fine");
    assert!(!path.exists());
    assert_eq!(lock.store().root(), project.path());
}

#[test]
fn scans_return_the_valid_and_report_the_unreadable_without_touching_them() {
    let project = tempfile::tempdir().expect("temp dir");
    let store = Store::open(project.path()).expect("opens");
    let good = store.recording_path("shop", "pay");
    store.write_recording(&good, &recording("Pay")).expect("writes");
    let nested = store.cache_dir().join("deep/er/more.json");
    store.write_recording(&nested, &recording("More")).expect("writes");
    let broken = store.recording_path("shop", "broken");
    fs::write(&broken, "{ \"version\": 1,").expect("writes");
    let newer = store.recording_path("shop", "newer");
    fs::write(&newer, "{\"version\": 2}").expect("writes");
    let binary = store.recording_path("shop", "binary");
    fs::write(&binary, [0xff, 0xfe, 0x00]).expect("writes");
    // Not recordings: skipped silently.
    fs::write(store.cache_dir().join("shop/notes.txt"), "hi").expect("writes");
    fs::write(store.cache_dir().join("shop/.pay.json.tmp-1-1"), "{").expect("writes");

    let scan = store.load_recordings();
    let found: Vec<&Path> = scan.found.iter().map(|(path, _)| path.as_path()).collect();
    assert_eq!(found, [nested.as_path(), good.as_path()]);
    let unreadable: Vec<(&Path, String)> =
        scan.unreadable.iter().map(|(path, error)| (path.as_path(), error.to_string())).collect();
    assert_eq!(unreadable.len(), 3, "{unreadable:?}");
    assert_eq!(unreadable[0].0, binary.as_path());
    assert_eq!(unreadable[1].0, broken.as_path());
    assert!(unreadable[1].1.ends_with("invalid JSON at 1:15: EOF while parsing a value"), "{}", unreadable[1].1);
    assert_eq!(unreadable[2].0, newer.as_path());
    assert!(
        unreadable[2]
            .1
            .ends_with("version: this recording is version 2, newer than this saffron understands: update saffron")
    );
    assert_eq!(fs::read_to_string(&broken).expect("still there"), "{ \"version\": 1,");
    // A project without a store yet scans as empty.
    let empty = tempfile::tempdir().expect("temp dir");
    let store = Store { root: empty.path().to_path_buf(), dir: empty.path().join(".saffron") };
    let scan = store.load_recordings();
    assert!(scan.found.is_empty() && scan.unreadable.is_empty());
}

#[test]
fn write_atomic_replaces_whole_files_and_cleans_up_on_error() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("sub/file.json");
    write_atomic(&path, b"first").expect("writes");
    write_atomic(&path, b"second").expect("writes");
    assert_eq!(fs::read(&path).expect("reads"), b"second");

    // Renaming over a non-empty directory fails after the temporary file was written.
    let blocker = directory.path().join("sub/blocked.json");
    fs::create_dir_all(blocker.join("inside")).expect("creates");
    let error = write_atomic(&blocker, b"data").expect_err("cannot replace a directory");
    assert_ne!(error.kind(), io::ErrorKind::NotFound);
    assert!(temporary_files(&directory.path().join("sub")).is_empty());
    assert!(write_atomic(Path::new("/"), b"x").is_err());
}

#[test]
fn readers_never_see_a_partial_file() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = Arc::new(directory.path().join("big.json"));
    let versions: Vec<Vec<u8>> = (0..4u8).map(|byte| vec![b'a' + byte; 256 * 1024]).collect();
    write_atomic(&path, &versions[0]).expect("writes");
    let writer = {
        let path = Arc::clone(&path);
        let versions = versions.clone();
        thread::spawn(move || {
            for round in 0..40 {
                write_atomic(&path, &versions[round % versions.len()]).expect("writes");
            }
        })
    };
    while !writer.is_finished() {
        let bytes = fs::read(path.as_path()).expect("always readable");
        assert!(versions.contains(&bytes), "a partial file was visible");
    }
    writer.join().expect("writer thread");
}

#[test]
fn the_lock_excludes_a_second_holder_until_released() {
    let project = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(Store::open(project.path()).expect("opens"));
    let held = store.lock().expect("locks");
    // Another open file description (as another process would have) cannot take it.
    let other = File::options().write(true).open(project.path().join(".saffron/.lock")).expect("opens");
    assert!(matches!(other.try_lock(), Err(std::fs::TryLockError::WouldBlock)));

    let (acquired, acquired_rx) = mpsc::channel();
    let waiter = {
        let store = Arc::clone(&store);
        thread::spawn(move || {
            let _lock = store.lock().expect("locks eventually");
            acquired.send(Instant::now()).expect("main thread listens");
        })
    };
    assert!(
        acquired_rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "the second holder got the lock while the first held it"
    );
    let released = Instant::now();
    drop(held);
    let acquired_at = acquired_rx.recv_timeout(Duration::from_secs(30)).expect("acquired after release");
    // Instants, not durations: a slow thread start on a busy machine must not matter.
    assert!(acquired_at >= released);
    waiter.join().expect("waiter thread");
    other.try_lock().expect("free again");
}

#[test]
fn locked_read_modify_writes_never_interleave() {
    let project = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(Store::open(project.path()).expect("opens"));
    let counter = Arc::new(store.reports_dir().join("counter.txt"));
    write_atomic(&counter, b"0").expect("writes");
    let threads = 4;
    let rounds = 25;
    let start = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let store = Arc::clone(&store);
            let counter = Arc::clone(&counter);
            let start = Arc::clone(&start);
            thread::spawn(move || {
                start.wait();
                for _ in 0..rounds {
                    let _lock = store.lock().expect("locks");
                    let text = fs::read_to_string(counter.as_path()).expect("reads");
                    let value: u32 = text.parse().expect("a number");
                    // Widen the race window an unlocked writer would lose updates in.
                    thread::yield_now();
                    write_atomic(&counter, (value + 1).to_string().as_bytes()).expect("writes");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("worker thread");
    }
    let total = fs::read_to_string(counter.as_path()).expect("reads");
    assert_eq!(total, (threads * rounds).to_string());
}

const LOCK_CHILD: &str = "SAFFRON_RECORDING_LOCK_CHILD";

// The other half of `the_lock_excludes_another_process`, run in a child process; without the
// environment variable it does nothing.
#[test]
fn lock_child_process() {
    let Some(root) = std::env::var_os(LOCK_CHILD) else {
        return;
    };
    let store = Store::open(&root).expect("opens");
    let _lock = store.lock().expect("locks");
    fs::write(Path::new(&root).join("child-acquired"), "acquired").expect("writes");
}

#[test]
fn the_lock_excludes_another_process() {
    let project = tempfile::tempdir().expect("temp dir");
    let store = Store::open(project.path()).expect("opens");
    let marker = project.path().join("child-acquired");
    let held = store.lock().expect("locks");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", "store::tests::lock_child_process", "--test-threads=1"])
        .env(LOCK_CHILD, project.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns the child");
    thread::sleep(Duration::from_millis(500));
    assert!(!marker.exists(), "the child took the lock while we held it");
    let running = child.try_wait().expect("polls").is_none();
    assert!(running, "the child should be waiting for the lock");
    drop(held);
    assert!(child.wait().expect("waits").success());
    assert!(marker.exists(), "the child acquired the lock once it was free");
}

/// A link that stays inside the project is read like any file; one that leads out is reported
/// unreadable, by reason, and never read.
#[cfg(unix)]
#[test]
fn links_out_of_the_project_are_not_followed() {
    let project = tempfile::tempdir().expect("temp dir");
    let outside = tempfile::tempdir().expect("temp dir");
    let store = Store::open(project.path()).expect("opens");
    let inside = store.recording_path("shop-cart-checkout", "pay");
    store.write_recording(&inside, &recording("Pay")).expect("written");
    let stray = outside.path().join("stray.json");
    fs::copy(&inside, &stray).expect("copy out");
    std::os::unix::fs::symlink(&inside, store.recording_path("shop-cart-checkout", "alias")).expect("link in");
    std::os::unix::fs::symlink(&stray, store.recording_path("shop-cart-checkout", "stray")).expect("link out");

    let scan = store.load_recordings();
    assert_eq!(scan.found.len(), 2, "the file and the link inside the store");
    assert_eq!(scan.unreadable.len(), 1);
    let (path, error) = &scan.unreadable[0];
    assert!(path.ends_with("stray.json"));
    assert!(matches!(error, StoreError::OutsideProject { .. }), "{error}");

    // A write into a folder that links out is refused, and nothing lands outside.
    std::os::unix::fs::symlink(outside.path(), store.cache_dir().join("elsewhere")).expect("link a folder out");
    let refused = store.write_recording(&store.recording_path("elsewhere", "pay"), &recording("Pay"));
    assert!(matches!(refused, Err(StoreError::OutsideProject { .. })), "{refused:?}");
    assert_eq!(fs::read_dir(outside.path()).expect("read").count(), 1, "only the stray file is there");
}

/// A folder of `.saffron/` that is a link to a folder elsewhere (a planted proposal folder, or
/// the proposals folder itself): nothing there is read, written or removed, not even by a
/// reject, which removes a file it cannot read.
#[cfg(unix)]
#[test]
fn nothing_is_removed_through_a_folder_that_links_out_of_the_store() {
    for linked in ["proposals/victim", "proposals"] {
        let project = tempfile::tempdir().expect("temp dir");
        let outside = tempfile::tempdir().expect("temp dir");
        let store = Store::open(project.path()).expect("opens");
        let victim = outside.path().join("settings.json");
        fs::write(&victim, "{\"keep\": true}").expect("a file elsewhere");
        let link = project.path().join(layout::DIR).join(linked);
        fs::create_dir_all(link.parent().expect("a parent")).expect("mkdir");
        std::os::unix::fs::symlink(outside.path(), &link).expect("link out");
        let path = match linked {
            "proposals" => store.proposals_dir().join("settings.json"),
            _ => store.proposals_dir().join("victim/settings.json"),
        };

        let read = store.read_proposal(&path);
        assert!(matches!(read, Err(StoreError::OutsideProject { .. })), "{linked}: {read:?}");
        let lock = store.lock().expect("the lock");
        let removed = lock.remove(&path);
        assert!(matches!(removed, Err(StoreError::OutsideProject { .. })), "{linked}: {removed:?}");
        let message = removed.err().map(|error| error.to_string()).unwrap_or_default();
        assert!(message.contains(".saffron folder"), "{message}");
        let written = store.write_file(&path, b"{}");
        assert!(matches!(written, Err(StoreError::OutsideProject { .. })), "{linked}: {written:?}");
        assert_eq!(fs::read_to_string(&victim).expect("still there"), "{\"keep\": true}", "{linked}");
    }
}

/// `.saffron/` itself must not lead out of the project, and its lock is never a link.
#[cfg(unix)]
#[test]
fn a_store_folder_or_lock_that_links_out_is_refused() {
    let project = tempfile::tempdir().expect("temp dir");
    let outside = tempfile::tempdir().expect("temp dir");
    std::os::unix::fs::symlink(outside.path(), project.path().join(layout::DIR)).expect("link the store out");
    let store = Store::open(project.path()).expect("opens");
    let refused = store.write_recording(&store.recording_path("a", "b"), &recording("Pay"));
    assert!(matches!(refused, Err(StoreError::OutsideProject { .. })), "{refused:?}");
    assert_eq!(fs::read_dir(outside.path()).expect("read").count(), 0, "nothing was written out there");

    let project = tempfile::tempdir().expect("temp dir");
    fs::create_dir(project.path().join(layout::DIR)).expect("mkdir");
    let elsewhere = outside.path().join("precious");
    fs::write(&elsewhere, "x").expect("write");
    std::os::unix::fs::symlink(&elsewhere, project.path().join(layout::LOCK)).expect("link the lock out");
    let store = Store::open(project.path()).expect("opens");
    assert!(matches!(store.lock(), Err(StoreError::OutsideProject { .. })));
}

/// A recording that is not UTF-8 is a problem of its content, named by line and column.
#[test]
fn text_that_is_not_utf8_is_invalid_at_its_place() {
    let project = tempfile::tempdir().expect("temp dir");
    let store = Store::open(project.path()).expect("opens");
    let path = store.recording_path("a", "b");
    fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    fs::write(&path, b"{\n  \"version\": 1,\n  \"feature\": \"caf\xe9\"\n}\n").expect("write latin-1");
    let error = store.read_recording(&path).expect_err("not UTF-8");
    assert!(matches!(error, StoreError::Invalid { .. }), "{error:?}");
    let StoreError::Invalid { source, .. } = &error else { return };
    assert_eq!(source.location(), Some((3, 18)), "{error}");
    assert!(error.to_string().contains("not UTF-8"), "{error}");
}
