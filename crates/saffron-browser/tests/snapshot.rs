//! The recording agent's snapshot: every interactive element with a ref, refs that name DOM
//! nodes (stable across snapshots, detached when the node goes), secrets never shown.

use crate::common;

use common::{Scenario, run};
use expect_test::expect;
use saffron_browser::{PageSnapshot, RefError};
use saffron_demo::DemoConfig;
use saffron_recording::Target;
use serde_json::json;

/// The ref on the first line of the snapshot that contains `needle`.
fn ref_on_line(snapshot: &PageSnapshot, needle: &str) -> String {
    let line = snapshot
        .text
        .lines()
        .find(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{}", snapshot.text));
    let start = line.find("[ref=").unwrap_or_else(|| panic!("no ref on {line:?}")) + 5;
    let end = line[start..].find(']').expect("a closed ref") + start;
    line[start..end].to_owned()
}

/// The target the recorder writes for the ref on the first line of `snapshot` with `needle`.
async fn target_on_line(s: &mut Scenario, snapshot: &PageSnapshot, needle: &str) -> Target {
    s.context.target_for_ref(&ref_on_line(snapshot, needle)).await.expect("a target").target
}

/// Every line holding `needle` has a ref.
fn assert_has_ref(snapshot: &PageSnapshot, needle: &str) {
    assert!(
        snapshot.text.lines().any(|line| line.contains(needle) && line.contains("[ref=e")),
        "{needle} has no line with a ref in\n{}",
        snapshot.text
    );
}

#[test]
fn the_sign_in_page_reads_as_one_line_per_element() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/login" })).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        assert_eq!(snapshot.url, format!("{}/login", s.server.url()));
        assert_eq!(snapshot.tabs.len(), 1);
        assert_eq!(snapshot.active_tab, 0);
        expect![[r#"
            url: /login
            title: Sign in · Saffron Shop back office
            Saffron Shop back office
            h1 [ref=e1]: Sign in
            textbox "Email" [ref=e2]
            textbox "Password" [ref=e3]
            button "Sign in" [ref=e4]
        "#]]
        .assert_eq(&snapshot.text);
        s.close().await;
    });
}

#[test]
fn every_interactive_element_of_the_orders_page_has_a_ref() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        for element in [
            r#"link "Orders""#,
            r#"button "Help""#,
            r#"searchbox "Search orders""#,
            r#"button "Search""#,
            r##"link "#1001""##,
            r##"link "#1004""##,
            r##"button "Delete order #1001""##,
            r##"button "Delete order #1004""##,
            r#"link "New order""#,
            r##"link "Open invoice of #1001""##,
            r#"button "Export orders""#,
        ] {
            assert_has_ref(&snapshot, element);
        }
        // The text around them: the heading, each row's cells, the status line.
        for text in ["h1 [ref=", ": Orders", "Ada Lovelace | €9.00 | Paid", "status [ref=", ": 4 orders"] {
            assert!(snapshot.text.contains(text), "{text:?} missing from\n{}", snapshot.text);
        }
        // A select lists its options; a checkbox says when it is checked.
        s.ok(json!({ "type": "goto", "url": "/orders/new" })).await;
        s.ok(json!({ "type": "check", "target": { "label": "Gift wrap" } })).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        assert_has_ref(&snapshot, r#"combobox "Product""#);
        assert!(snapshot.text.contains("[options: Tea (selected) | Mugs | Saffron]"), "{}", snapshot.text);
        assert_has_ref(&snapshot, r#"checkbox "Gift wrap" [checked]"#);
        assert_has_ref(&snapshot, r#"spinbutton "Quantity""#);
        s.close().await;
    });
}

#[test]
fn a_node_keeps_its_ref_across_snapshots_and_a_removed_one_is_detached() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/rows" })).await;
        let before = s.context.snapshot().await.expect("a snapshot");
        let row_1002 = ref_on_line(&before, "Order 1002");
        let insert = ref_on_line(&before, "Insert an order at the top");
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Insert an order at the top" } })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Reverse the list" } })).await;
        let after = s.context.snapshot().await.expect("a snapshot");
        assert_eq!(ref_on_line(&after, "Order 1002"), row_1002, "{}\n{}", before.text, after.text);
        assert_eq!(ref_on_line(&after, "Insert an order at the top"), insert);
        let inserted = ref_on_line(&after, "Order 1000");
        assert!(!before.text.contains(&format!("[ref={inserted}]")), "a new node gets a new ref");

        // The row's delete button goes with its row: its ref is then detached, not reused.
        let line = after.text.lines().find(|line| line.contains("Order 1003")).expect("row 1003").to_owned();
        let delete = line.rsplit("[ref=").next().and_then(|rest| rest.split(']').next()).expect("a ref").to_owned();
        s.ok(json!({ "type": "click", "target": { "role": "button", "within": { "role": "listitem", "hasText": "Order 1003" } } }))
            .await;
        s.ok(json!({ "type": "expectText", "target": { "css": ["#deleted"] }, "text": "Deleted: Order 1003" })).await;
        match s.context.target_for_ref(&delete).await {
            Err(RefError::Detached { reference }) => assert_eq!(reference, delete),
            other => panic!("expected a detached ref, got {other:?}"),
        }
        let message = RefError::Detached { reference: delete.clone() }.to_string();
        assert!(message.contains("take a new snapshot"), "{message}");
        // A new document detaches every ref of the old one.
        s.ok(json!({ "type": "goto", "url": "/lab/rows" })).await;
        assert!(matches!(s.context.target_for_ref(&row_1002).await, Err(RefError::Detached { .. })));
        let fresh = s.context.snapshot().await.expect("a snapshot");
        assert_ne!(ref_on_line(&fresh, "Order 1002"), row_1002);
        s.close().await;
    });
}

#[test]
fn a_made_up_ref_is_unknown() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/login" })).await;
        s.context.snapshot().await.expect("a snapshot");
        for made_up in ["e999", "e0", "button", "", "e-1"] {
            match s.context.target_for_ref(made_up).await {
                Err(RefError::Unknown { reference }) => assert_eq!(reference, made_up),
                other => panic!("{made_up:?}: expected an unknown ref, got {other:?}"),
            }
        }
        s.close().await;
    });
}

#[test]
fn a_password_never_shows_in_the_snapshot() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/login" })).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Password" }, "value": "correct-horse-battery" })).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Email" }, "value": "ada@example.test" })).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        assert!(!snapshot.text.contains("correct-horse-battery"), "{}", snapshot.text);
        assert!(snapshot.text.lines().any(|line| line == r#"textbox "Password" [ref=e3]: ••••"#), "{}", snapshot.text);
        // Other fields show what they hold.
        assert!(snapshot.text.contains(r#"textbox "Email" [ref=e2]: ada@example.test"#), "{}", snapshot.text);
        s.close().await;
    });
}

#[test]
fn the_header_lists_the_tabs_when_there_are_several() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.sign_in().await;
        s.ok(json!({ "type": "click", "target": { "role": "link", "name": "Open invoice of #1001" } })).await;
        // The new tab took the front; the orders tab is still the active one, and is read.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let orders = loop {
            let snapshot = s.context.snapshot().await.expect("a snapshot of the tab behind");
            if snapshot.tabs.len() == 2 || std::time::Instant::now() > deadline {
                break snapshot;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        };
        assert_eq!(orders.tabs.len(), 2, "the invoice tab opened: {:?}", orders.tabs);
        assert_eq!(orders.active_tab, 0);
        assert!(orders.text.starts_with("url: /orders"), "{}", orders.text);
        let export = ref_on_line(&orders, r#"button "Export orders""#);
        let found = s.context.target_for_ref(&export).await.expect("a target in the tab behind");
        assert_eq!(found.target.name.as_deref(), Some("Export orders"));
        s.ok(json!({ "type": "switchTab", "urlPattern": "/invoices/" })).await;
        // A ref of the tab left behind is not one of the active tab's.
        assert!(matches!(s.context.target_for_ref(&export).await, Err(RefError::Detached { .. })));
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        assert_eq!(snapshot.tabs.len(), 2, "{:?}", snapshot.tabs);
        assert_eq!(snapshot.active_tab, 1);
        assert!(snapshot.tabs[0].url.ends_with("/orders"), "{:?}", snapshot.tabs);
        assert!(snapshot.url.ends_with("/invoices/1001"));
        assert!(snapshot.text.contains("tabs: 0: Orders"), "{}", snapshot.text);
        assert!(snapshot.text.contains("/invoices/1001 (active)"), "{}", snapshot.text);
        assert!(snapshot.text.contains("Invoice #1001"), "{}", snapshot.text);
        s.close().await;
    });
}

#[test]
fn a_snapshot_taken_while_the_page_navigates_reads_one_whole_document() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        for round in 0..6 {
            s.ok(json!({ "type": "goto", "url": "/login" })).await;
            s.ok(json!({ "type": "fill", "target": { "label": "Email" }, "value": saffron_demo::DEMO_EMAIL })).await;
            s.ok(json!({ "type": "fill", "target": { "label": "Password" }, "value": saffron_demo::DEFAULT_PASSWORD }))
                .await;
            // The click returns as soon as it is dispatched; the sign-in request and the
            // navigation to the orders page run while the snapshot is taken.
            s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Sign in" } })).await;
            let snapshot = s.context.snapshot().await.unwrap_or_else(|error| panic!("round {round}: {error}"));
            // Whichever document it read, each of its refs names an element of that document.
            let on_orders = snapshot.text.starts_with("url: /orders");
            let first_ref = ref_on_line(&snapshot, if on_orders { r#"link "Orders""# } else { r#"button "Sign in""# });
            match s.context.target_for_ref(&first_ref).await {
                Ok(_) | Err(RefError::Detached { .. }) => {}
                Err(other) => panic!("round {round}: {other}\n{}", snapshot.text),
            }
            s.ok(json!({ "type": "expectUrl", "url": "/orders" })).await;
        }
        s.close().await;
    });
}

/// Right after a click that navigates, the new document may have its head and not yet its
/// body: the snapshot waits until it is parsed rather than show the agent an empty page.
#[test]
fn a_snapshot_waits_for_a_document_still_being_parsed() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/slow-body" })).await;
        s.ok(json!({ "type": "click", "target": { "role": "link", "name": "Again" } })).await;
        // The new document is in place (its URL), its body 800 ms away.
        s.ok(json!({ "type": "expectUrl", "url": "/lab/slow-body?again=1" })).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        assert!(snapshot.text.starts_with("url: /lab/slow-body?again=1\n"), "{}", snapshot.text);
        assert_has_ref(&snapshot, r#"link "Again""#);
        s.close().await;
    });
}

/// A frame's document is read into the snapshot under its frame's line, frames in frames too,
/// and a ref inside one gives a target that carries its frame, which replay then finds.
#[test]
fn frames_are_read_and_their_refs_give_targets_in_the_frame() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/frame" })).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        expect![[r#"
            url: /lab/frame
            title: Lab: frame
            h1 [ref=e1]: Checkout
            paragraph [ref=e2]: The card form is in a frame, as payment providers embed theirs.
            iframe "Card details"
              textbox "Card number" [ref=e3]
              button "Pay" [ref=e4]
            button "Back to the cart" [ref=e5]
        "#]]
        .assert_eq(&snapshot.text);
        let pay = s.context.target_for_ref("e4").await.expect("a target");
        assert_eq!(
            serde_json::to_value(&pay.target).expect("a target"),
            json!({ "role": "button", "name": "Pay", "text": "Pay",
                "frame": { "css": ["iframe[title=\"Card details\"]"], "tier": "css" }, "tier": "role" })
        );

        // A cross-site frame holding a frame of its own.
        s.ok(json!({ "type": "goto", "url": "/lab/frames" })).await;
        s.ok(json!({ "type": "expectVisible", "target": { "role": "button", "name": "Verify",
            "frame": { "css": ["iframe[title=\"Bank check\"]"], "frame": { "css": ["#card"] } } } }))
            .await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        let verify = ref_on_line(&snapshot, r#"button "Verify""#);
        let number = ref_on_line(&snapshot, r#"textbox "Card number""#);
        let bank =
            snapshot.text.lines().find(|line| line.contains(r#"iframe "Bank check""#)).expect("the bank's frame");
        let verify_line = snapshot.text.lines().find(|line| line.contains(r#"button "Verify""#)).expect("its button");
        let indent = |line: &str| line.len() - line.trim_start().len();
        assert_eq!(indent(verify_line), indent(bank) + 2, "{}", snapshot.text);
        let verify = s.context.target_for_ref(&verify).await.expect("a target").target;
        let bank = verify.frame.as_deref().expect("in the bank's frame");
        assert_eq!(bank.css, ["iframe[title=\"Bank check\"]"]);
        assert_eq!(
            bank.frame.as_deref().map(|card| card.css.clone()),
            Some(vec!["#card".to_owned(), "iframe[title=\"Card payment\"]".to_owned()])
        );
        s.ok(json!({ "type": "click", "target": verify })).await;
        s.ok(json!({ "type": "expectVisible", "target": { "role": "button", "name": "Verified", "frame": bank } }))
            .await;
        let number = s.context.target_for_ref(&number).await.expect("a target").target;
        s.ok(json!({ "type": "fill", "target": number, "value": "4242" })).await;
        s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Pay", "frame": { "css": ["#card"] } } }))
            .await;
        s.ok(json!({ "type": "expectText", "target": { "role": "status" }, "textRegex": "^Paid with the card ending 4242" })).await;
        s.close().await;
    });
}

/// A password field in a cross-site frame is masked as one in the page is: the agent's model
/// never reads what it holds.
#[test]
fn a_password_in_a_frame_never_shows_in_the_snapshot() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/frames" })).await;
        let code = json!({ "label": "Security code", "frame": { "css": ["#card"] } });
        s.ok(json!({ "type": "fill", "target": code, "value": "horse-battery-731" })).await;
        s.ok(json!({ "type": "fill", "target": { "label": "Card number", "frame": { "css": ["#card"] } }, "value": "4242" }))
            .await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        assert!(!snapshot.text.contains("horse-battery-731"), "{}", snapshot.text);
        let masked = snapshot
            .text
            .lines()
            .any(|line| line.trim_start().starts_with(r#"textbox "Security code" [ref="#) && line.ends_with("]: ••••"));
        assert!(masked, "{}", snapshot.text);
        assert!(
            snapshot.text.contains(r#"textbox "Card number" [ref="#) && snapshot.text.contains("]: 4242"),
            "{}",
            snapshot.text
        );
        s.close().await;
    });
}

#[test]
fn hidden_elements_and_their_text_are_left_out() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/ladder" })).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        for hidden in ["Decoration", "Invisible", "invisible text", "Undisplayed"] {
            assert!(!snapshot.text.contains(hidden), "{hidden:?} shows in\n{}", snapshot.text);
        }
        assert!(snapshot.text.contains(r#"button "Save" [ref="#), "{}", snapshot.text);
        assert!(snapshot.text.contains("status [ref="), "{}", snapshot.text);
        s.close().await;
    });
}

#[test]
fn file_inputs_are_marked_and_the_label_of_a_hidden_one_gets_a_ref_the_agent_can_upload_through() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/upload" })).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        let pickers: Vec<&str> = snapshot.text.lines().filter(|line| line.contains("[file")).collect();
        expect![[r#"
            [
                "button \"Photo\" [file input] [ref=e3]: No file chosen",
                "label \"Attach documents\" [file chooser] [multiple] [ref=e5]",
                "button \"Locked\" [disabled] [file input] [ref=e11]: No file chosen",
            ]
        "#]]
        .assert_debug_eq(&pickers);

        // The styled picker's label is plain text in the accessibility tree; with its ref the
        // agent gets a target that replay finds and uploads through.
        let label = ref_on_line(&snapshot, "Attach documents");
        let target = s.context.target_for_ref(&label).await.expect("a target").target;
        let folder = tempfile::tempdir().expect("a folder");
        let file = folder.path().join("notes.txt");
        std::fs::write(&file, "two words").expect("written");
        s.ok(json!({ "type": "upload", "target": target, "files": [file] })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "files-documents" }, "text": "notes.txt 9 text/plain \"two words\"" }))
            .await;
        s.close().await;
    });
}

/// What the page lets one drag is marked `[draggable]` and has a ref, whatever its role (a
/// list item gets none otherwise); the ref's target drags the card onto the other column's
/// heading, and the column takes it.
#[test]
fn draggable_elements_are_marked_and_their_refs_drag() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/drag" })).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        let card = ref_on_line(&snapshot, "Write tests");
        let line = snapshot.text.lines().find(|line| line.contains("Write tests")).unwrap_or_default();
        assert!(line.trim_start().starts_with("listitem [draggable] [ref="), "{}", snapshot.text);
        // The parcel follows pointer events, not the browser's drag and drop: no mark.
        assert!(
            !snapshot.text.lines().any(|line| line.contains("Parcel") && line.contains("[draggable]")),
            "{}",
            snapshot.text
        );
        // Recorded while it holds both cards.
        let todo = target_on_line(&mut s, &snapshot, r#"region "To do""#).await;
        assert_eq!(todo.text, None, "{todo:?}");
        // A drop zone's heading, inside it, takes the drop.
        let card = s.context.target_for_ref(&card).await.expect("a target").target;
        let done = target_on_line(&mut s, &snapshot, ": Done").await;
        s.ok(json!({ "type": "drag", "target": card, "to": done })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "board" }, "text": "To do: Ship it | Done: Write tests" }))
            .await;
        // A named zone with nothing inside has a ref of its own, and its target is its role and name.
        let icebox = target_on_line(&mut s, &snapshot, r#"region "Icebox""#).await;
        assert_eq!(
            (icebox.role.as_deref(), icebox.name.as_deref()),
            (Some("region"), Some("Icebox")),
            "{}",
            snapshot.text
        );
        let card = target_on_line(&mut s, &snapshot, "Ship it").await;
        s.ok(json!({ "type": "drag", "target": card, "to": icebox })).await;
        s.ok(json!({ "type": "expectText", "target": { "testId": "icebox" }, "text": "Iced: Ship it" })).await;
        // A zone's target is what it is, not what it holds: dropping back onto "To do", which
        // has lost both its cards since it was recorded, is no drift.
        let card = json!({ "text": "Write tests" });
        let performed = s.ok(json!({ "type": "drag", "target": card, "to": todo })).await;
        assert!(performed.drift.is_empty(), "{:?}", performed.drift);
        s.ok(json!({ "type": "expectText", "target": { "testId": "board" }, "text": "To do: Write tests | Done:" }))
            .await;
        s.close().await;
    });
}

/// A legacy form (the Meridian lab: table layout, no `<label>`, no ARIA) names its fields only by
/// the cell beside them. The snapshot gives each that name, marked as inferred, and shows a
/// field's value once; the recorded target finds the field through the innermost row holding
/// that text, and replays.
#[test]
fn a_field_named_only_by_the_cell_beside_it_reads_by_that_name_and_is_found_through_its_row() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        s.ok(json!({ "type": "goto", "url": "/lab/meridian/payment" })).await;
        s.ok(json!({ "type": "fill", "target": { "css": ["#ctl00_MainContent_txtPayee"] }, "value": "ACME" })).await;
        let snapshot = s.context.snapshot().await.expect("a snapshot");
        expect![[r#"
            url: /lab/meridian/payment
            title: Post a payment
            Post a payment
            Member no.
            textbox "Member no." (name inferred from the cell beside it) [ref=e1]
            Payee
            textbox "Payee" (name inferred from the cell beside it) [ref=e2]: ACME
            Amount
            textbox "Amount" (name inferred from the cell beside it) [ref=e3]
            button "Post" [ref=e4]
            link "Back to menu" [ref=e5]
        "#]]
        .assert_eq(&snapshot.text);
        let target = target_on_line(&mut s, &snapshot, "\"Payee\"").await;
        let scope = target.within.as_deref().expect("found through its row");
        assert_eq!(scope.container.css, ["tr:not(:has(tr))"], "{target:?}");
        assert_eq!(scope.has_text.as_deref(), Some("Payee"), "{target:?}");
        assert_eq!(target.role.as_deref(), Some("textbox"), "{target:?}");
        let fill = json!({ "type": "fill", "target": serde_json::to_value(&target).expect("json"), "value": "Globex" });
        s.ok(fill).await;
        let check =
            json!({ "type": "expectValue", "target": { "css": ["#ctl00_MainContent_txtPayee"] }, "value": "Globex" });
        s.ok(check).await;
        s.close().await;
    });
}

/// A single-page app re-renders after the click's own task (a filter link changes the hash, and
/// the list is drawn again on `hashchange`): the snapshot taken right after the click shows the
/// page as drawn, not the list from before.
#[test]
fn a_snapshot_right_after_a_filter_click_shows_the_page_as_drawn() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        for round in 0..10 {
            s.ok(json!({ "type": "goto", "url": format!("/lab/todos?round={round}") })).await;
            let field = json!({ "label": "New todo" });
            for todo in ["walk the dog", "buy milk"] {
                s.ok(json!({ "type": "fill", "target": field, "value": todo })).await;
                s.ok(json!({ "type": "press", "target": field, "key": "Enter" })).await;
            }
            s.ok(json!({ "type": "check", "target": { "role": "checkbox", "name": "Toggle walk the dog" } })).await;
            s.ok(json!({ "type": "click", "target": { "role": "link", "name": "Active" } })).await;
            let snapshot = s.context.snapshot().await.expect("a snapshot");
            assert!(
                !snapshot.text.contains("walk the dog"),
                "round {round}: the completed todo still shows:\n{}",
                snapshot.text
            );
            assert!(snapshot.text.contains("buy milk"), "round {round}:\n{}", snapshot.text);
        }
        s.close().await;
    });
}

#[test]
fn a_snapshot_waits_for_a_page_that_draws_over_several_frames() {
    run(|browser| async move {
        let mut s = Scenario::start(&browser, DemoConfig::default()).await;
        for round in 0..5 {
            s.ok(json!({ "type": "goto", "url": format!("/lab/ladder?round={round}") })).await;
            s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Load more" } })).await;
            let snapshot = s.context.snapshot().await.expect("a snapshot");
            // Eight frames of drawing, read once the list stopped changing.
            assert!(snapshot.text.contains("Result 8"), "round {round}: the list is half drawn:\n{}", snapshot.text);
        }
        s.close().await;
    });
}

#[test]
fn a_snapshot_after_a_frames_form_is_posted_shows_the_page_the_post_led_to() {
    run(|browser| async move {
        let mut config = DemoConfig::default();
        config.faults.insert(saffron_demo::Fault::Latency);
        let mut s = Scenario::start(&browser, config).await;
        s.ok(json!({ "type": "goto", "url": "/lab/meridian" })).await;
        let main = json!({ "css": ["frame[name=\"main\"]"] });
        for round in 1..=10 {
            s.ok(json!({ "type": "click", "target": { "role": "link", "name": "Post a payment", "frame": main } }))
                .await;
            let payee = json!({ "css": ["#ctl00_MainContent_txtPayee"], "frame": main });
            s.ok(json!({ "type": "fill", "target": payee, "value": format!("ACME {round}") })).await;
            s.ok(json!({ "type": "click", "target": { "role": "button", "name": "Post", "frame": main } })).await;
            let snapshot = s.context.snapshot().await.expect("a snapshot");
            assert!(
                snapshot.text.contains("Payment posted") && !snapshot.text.contains("Post a payment"),
                "round {round}: the frame's old page:\n{}",
                snapshot.text
            );
            s.ok(json!({ "type": "click", "target": { "role": "link", "name": "Back to menu", "frame": main } })).await;
        }
        s.close().await;
    });
}
