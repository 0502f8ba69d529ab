//! No Chromium process and no profile folder outlive the process that launched the browser, however
//! it ends; and stale folders of owners that are gone are swept.
//!
//! The owner is this test binary run again as a child (`child_owning_a_browser`), so what is
//! tested is the library alone, in a process that can be killed.

use crate::processes;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use processes::{Reaper, browser_processes, nothing_left, signal, wait_for, wait_for_browser_with_a_page, watchdog_of};
use saffron_browser::{Browser, BrowserConfig, ContextOptions, sweep_stale_profiles};

/// Set in the child's environment: only then does `child_owning_a_browser` do anything.
const CHILD: &str = "SAFFRON_TEST_BROWSER_OWNER";

/// Precedes the profile folder in the child's output (libtest's own words share the line).
const PROFILE_MARK: &str = "saffron-test-profile=";

/// Not a test of its own: the child process of the tests below. It launches a browser, opens a
/// page, prints the profile folder, and keeps the browser until its standard input closes; then
/// it closes the browser and exits.
#[test]
fn child_owning_a_browser() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    let (browser, context) = runtime.block_on(async {
        let browser = Browser::launch(BrowserConfig::default()).await.expect("Chromium launches");
        // Nothing listens on the discard port: the page fails to load, but it is opened.
        let context = browser
            .new_context(ContextOptions { base_url: "http://127.0.0.1:9".into() })
            .await
            .expect("a browser context");
        (browser, context)
    });
    println!("{PROFILE_MARK}{}", browser.profile_dir().expect("a launched browser has a profile").display());
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    runtime.block_on(async {
        context.close().await;
        browser.close().await;
    });
}

/// A child owning a browser whose profile folder is in `temporary`, and that folder.
fn start_owner(temporary: &Path) -> (Child, PathBuf) {
    let mut child = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "leftovers::child_owning_a_browser", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("TMPDIR", temporary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the child starts");
    let stdout: ChildStdout = child.stdout.take().expect("piped");
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let profile = lines
        .find_map(|line| line.split_once(PROFILE_MARK).map(|(_, path)| PathBuf::from(path)))
        .expect("the child prints its profile folder (did Chromium launch?)");
    // Read on to the end, so the child's last words do not meet a closed pipe.
    std::thread::spawn(move || lines.for_each(drop));
    assert!(profile.starts_with(temporary), "{} is in TMPDIR", profile.display());
    (child, profile)
}

/// Nothing is left in the owner's temporary directory (Chromium's own scratch folders included).
fn assert_empty(temporary: &tempfile::TempDir) {
    let left: Vec<_> =
        std::fs::read_dir(temporary.path()).expect("readable").flatten().map(|entry| entry.file_name()).collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

fn temporary_directory() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("saffron-leftovers-test-").tempdir().expect("a temporary directory")
}

#[test]
fn a_killed_owner_leaves_no_chromium_and_no_profile_folder() {
    let temporary = temporary_directory();
    let (mut owner, profile) = start_owner(temporary.path());
    let processes = wait_for_browser_with_a_page(&profile);
    let _reaper = Reaper { profile: profile.clone(), processes: processes.clone() };
    // The browser, a zygote, a renderer at least.
    assert!(processes.len() >= 3, "{processes:#?}");
    owner.kill().expect("SIGKILL");
    owner.wait().expect("reaped");
    wait_for(Duration::from_secs(15), "cleaned up after the killed owner", || nothing_left(&profile, &processes));
    assert_empty(&temporary);
}

#[test]
fn an_owner_that_closes_its_browser_leaves_nothing_either() {
    let temporary = temporary_directory();
    let (mut owner, profile) = start_owner(temporary.path());
    let processes = wait_for_browser_with_a_page(&profile);
    let _reaper = Reaper { profile: profile.clone(), processes: processes.clone() };
    drop(owner.stdin.take());
    let status = owner.wait().expect("the child ends");
    assert!(status.success(), "{status}");
    // `close` returns once the watchdog is done: nothing to wait for.
    nothing_left(&profile, &processes).expect("nothing left once close returned");
    assert_empty(&temporary);
}

#[test]
fn the_sweep_removes_a_dead_owners_folder_and_keeps_a_live_ones() {
    let temporary = temporary_directory();
    let (mut live, live_profile) = start_owner(temporary.path());
    let (mut dead, dead_profile) = start_owner(temporary.path());
    let live_processes = wait_for_browser_with_a_page(&live_profile);
    let dead_processes = wait_for_browser_with_a_page(&dead_profile);
    let _reapers = [
        Reaper { profile: live_profile.clone(), processes: live_processes.clone() },
        Reaper { profile: dead_profile.clone(), processes: dead_processes.clone() },
    ];
    // The owner dies with its watchdog (say both were killed by the OOM killer): its Chromium
    // and its folder stay behind, which is what the sweep is for.
    let watchdog = watchdog_of(&dead_profile).expect("the dead owner's watchdog runs");
    signal("KILL", &[watchdog.pid]);
    dead.kill().expect("SIGKILL");
    dead.wait().expect("reaped");
    assert!(dead_profile.is_dir());
    assert!(!browser_processes(&dead_profile).is_empty(), "the orphaned Chromium still runs");
    // Not ours to judge: a folder without an owner lock (one being created, or from an older
    // version), and a link named like a profile.
    let unlocked = temporary.path().join("saffron-chromium-without-lock");
    std::fs::create_dir(&unlocked).expect("mkdir");
    let link = temporary.path().join("saffron-chromium-link");
    std::os::unix::fs::symlink(&dead_profile, &link).expect("symlink");

    let removed = sweep_stale_profiles(temporary.path());

    assert_eq!(removed, vec![dead_profile.clone()]);
    nothing_left(&dead_profile, &dead_processes).expect("the dead owner's browser and folder are gone");
    assert!(live_profile.is_dir(), "the live owner's folder is kept");
    // The browser process itself (renderers and helpers come and go).
    let browser: Vec<_> = live_processes
        .iter()
        .filter(|process| process.command.contains("--user-data-dir=") && !process.command.contains("--type="))
        .collect();
    assert!(browser.len() == 1 && processes::is_alive(browser[0]), "{browser:#?} in {live_processes:#?}");
    assert!(unlocked.is_dir() && link.symlink_metadata().is_ok());
    // And the live owner, ending normally, removes its own.
    drop(live.stdin.take());
    assert!(live.wait().expect("the child ends").success());
    nothing_left(&live_profile, &live_processes).expect("nothing left once close returned");
}
