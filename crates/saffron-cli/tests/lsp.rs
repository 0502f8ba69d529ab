//! End-to-end tests of `saffron lsp`: the real binary, framed JSON-RPC over stdio, on a copy of
//! the example project.

use crate::support;

use serde_json::{Value, json};
use support::{LspClient, example_project, position_of, start_saffron_lsp, uri};

/// A server on a fresh copy of the example project (`project` names the copy), initialized,
/// with `file` open: the copy's root, the client, the file's URI and its text.
fn opened(project: &str, file: &str) -> (std::path::PathBuf, LspClient, String, String) {
    let root = example_project(project);
    let mut client = start_saffron_lsp(&root);
    client.initialize();
    let uri = client.open(file);
    let text = std::fs::read_to_string(root.join(file)).expect("read");
    (root, client, uri, text)
}

fn labels(completion: &Value) -> Vec<String> {
    completion["items"].as_array().into_iter().flatten().filter_map(|i| i["label"].as_str().map(String::from)).collect()
}

#[test]
fn initialize_complete_diagnose_and_shut_down() {
    let root = example_project("lsp-main");
    let mut client = start_saffron_lsp(&root);
    let init = client.initialize();
    assert_eq!(init["serverInfo"]["name"], "saffron");
    assert_eq!(init["capabilities"]["textDocumentSync"]["change"], 2, "incremental sync");

    let uri = client.open("features/orders.saffron");
    // The near-duplicate wording gets a warning quoting the existing one.
    let diagnostics = client.diagnostics_for(&uri, |d| !d.is_empty());
    let near = diagnostics.iter().find(|d| d["code"] == "near-duplicate").expect("a near-duplicate warning");
    assert_eq!(near["severity"], 2);
    assert!(near["message"].as_str().is_some_and(|m| m.contains("\"I see the orders page\"")), "{near}");
    let text = std::fs::read_to_string(root.join("features/orders.saffron")).expect("read");
    assert_eq!(near["range"]["start"], position_of(&text, "I should see the orders page", 0));

    // Type a new step, incrementally, and complete it.
    let after = position_of(&text, "Then I see that the export is ready", "Then I see that the export is ready".len());
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": uri, "version": 2 },
            "contentChanges": [{ "range": { "start": after, "end": after }, "text": "\n    Then I se" }]
        }),
    );
    let line = after["line"].as_u64().expect("line") + 1;
    let completion = client.call(
        "textDocument/completion",
        json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": 13 } }),
    );
    let items = completion["items"].as_array().expect("items");
    // Ranked by context: the prefix matches this feature writes come first.
    let first_label = items[0]["label"].as_str().unwrap_or_default();
    assert!(text.contains(&format!("Then {first_label}\n")), "a step of this feature first: {:?}", labels(&completion));
    let first = items.iter().find(|item| item["label"] == "I see the orders page").expect("the orders page step");
    assert!(first["labelDetails"]["description"].as_str().is_some_and(|d| d.starts_with("✓ recorded")));
    // The range and the snippet format are stated once for the list (the client declared
    // `completionList.itemDefaults`, as VS Code does).
    assert_eq!(completion["itemDefaults"]["editRange"]["start"], json!({ "line": line, "character": 9 }));
    assert_eq!(completion["itemDefaults"]["insertTextFormat"], 2);
    assert!(first.get("textEdit").is_none() && first.get("textEditText").is_none(), "the label is the text: {first}");
    assert!(!labels(&completion).contains(&"I se".to_string()), "the text being typed is not offered");
    // The detail and the documentation wait for the editor to show the item.
    assert!(first.get("detail").is_none() && first.get("documentation").is_none(), "{first}");
    let resolved = client.call("completionItem/resolve", first.clone());
    assert_eq!(resolved["detail"], "recorded: replays for free", "{resolved}");
    let documentation = resolved["documentation"]["value"].as_str().unwrap_or_default();
    assert!(documentation.contains("expect heading \"Orders\" to be visible"), "{documentation}");

    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn edits_and_completions_sent_at_once_are_taken_in_order() {
    let (root, mut client, uri, text) = opened("lsp-order", "features/orders.saffron");
    let after = position_of(&text, "Then I see that the export is ready", "Then I see that the export is ready".len());
    let line = after["line"].as_u64().expect("line") + 1;
    let edit = |version: u64, start: &Value, end: &Value, text: &str| {
        json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": { "uri": uri, "version": version },
            "contentChanges": [{ "range": { "start": start, "end": end }, "text": text }]
        } })
    };
    let complete = |id: u64, character: u64| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "textDocument/completion", "params": {
            "textDocument": { "uri": uri }, "position": { "line": line, "character": character }
        } })
    };
    // Two edits, each followed by a completion, in one write: each list sees the edits before it.
    let typed_end = json!({ "line": line, "character": 13 });
    let line_start = json!({ "line": line, "character": 9 });
    client.send_together(&[
        edit(2, &after, &after, "\n    Then I se"),
        complete(9001, 13),
        edit(3, &line_start, &typed_end, "I see that the ex"),
        complete(9002, 26),
    ]);
    let first = client.wait_for(|m| m["id"] == 9001);
    let first_labels = labels(&first["result"]);
    assert!(
        first_labels.iter().any(|label| label == "I see the orders page") && first_labels.len() > 1,
        "the list for \"I se\": {first}"
    );
    let second = client.wait_for(|m| m["id"] == 9002);
    assert_eq!(labels(&second["result"]), ["I see that the export is ready"], "{second}");

    // Closing clears the document's diagnostics; the file on disk is the truth again.
    client.notify("textDocument/didClose", json!({ "textDocument": { "uri": uri } }));
    let cleared = client.wait_for(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri
            && m["params"]["diagnostics"].as_array().is_some_and(Vec::is_empty)
    });
    assert!(cleared["params"].get("version").is_none_or(Value::is_null), "{cleared}");

    // After `shutdown` a request is refused, not answered.
    client.call("shutdown", Value::Null);
    let refused = client.request("textDocument/completion", complete(9003, 13)["params"].clone());
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    client.notify("exit", Value::Null);
    let _ = std::fs::remove_dir_all(&root);
}

/// Types "    And every order" on a new line of the orders feature and completes it: the list,
/// its first step with a quoted value, and the cursor's position.
fn complete_every_order(client: &mut LspClient, root: &std::path::Path) -> (Value, Value, Value) {
    let text = std::fs::read_to_string(root.join("features/orders.saffron")).expect("read");
    let typed = text.replacen(
        "    Then I see that the export is ready",
        "    Then I see that the export is ready\n    And every order",
        1,
    );
    let uri = client.open_text("features/orders.saffron", &typed);
    let at = position_of(&typed, "    And every order", "    And every order".len());
    let completion = client.call("textDocument/completion", json!({ "textDocument": { "uri": uri }, "position": at }));
    let quoted = completion["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["label"].as_str().is_some_and(|l| l.contains('"')))
        .cloned()
        .unwrap_or_else(|| panic!("a step with a quoted value: {:?}", labels(&completion)));
    (completion, quoted, at)
}

#[test]
fn completion_items_carry_their_edit_for_clients_without_item_defaults() {
    let root = example_project("lsp-plain-completion");
    let mut client = start_saffron_lsp(&root);
    // An editor with no snippets and no list-wide defaults (as Neovim 0.7 declares).
    client.initialize_with(json!({ "textDocument": { "completion": { "completionItem": {} } } }));
    let (completion, quoted, at) = complete_every_order(&mut client, &root);
    assert!(completion.get("itemDefaults").is_none(), "{completion}");
    assert_eq!(quoted["textEdit"]["newText"], quoted["label"], "plain text, not a snippet: {quoted}");
    assert_eq!(quoted["textEdit"]["range"]["start"], json!({ "line": at["line"], "character": 8 }));
    assert!(quoted.get("insertTextFormat").is_none(), "{quoted}");
    assert!(quoted["detail"].as_str().is_some(), "no lazy resolve declared, so the detail is in the list: {quoted}");

    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn snippet_items_state_their_text_over_the_default_range() {
    let root = example_project("lsp-snippet-completion");
    let mut client = start_saffron_lsp(&root);
    client.initialize();
    let (completion, quoted, at) = complete_every_order(&mut client, &root);
    assert_eq!(completion["itemDefaults"]["editRange"]["end"]["line"], at["line"]);
    let snippet = quoted["textEditText"].as_str().unwrap_or_else(|| panic!("a snippet text: {quoted}"));
    assert!(snippet.contains("\"${1:"), "the quoted value is a tab stop: {snippet}");
    assert!(quoted.get("textEdit").is_none(), "{quoted}");

    // Resolve sends back every field the client sent, with the detail added.
    let resolved = client.call("completionItem/resolve", quoted.clone());
    assert_eq!(resolved["textEditText"], quoted["textEditText"], "{resolved}");
    assert!(resolved["detail"].as_str().is_some(), "{resolved}");

    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn definition_references_hover_rename() {
    let (root, mut client, uri, text) = opened("lsp-navigation", "features/orders.saffron");
    let on_invocation = position_of(&text, "StepSet signed in", 10);

    let definition =
        client.call("textDocument/definition", json!({ "textDocument": { "uri": uri }, "position": on_invocation }));
    assert!(definition["uri"].as_str().is_some_and(|u| u.ends_with("features/shared.steps.saffron")), "{definition}");
    assert_eq!(definition["range"]["start"], json!({ "line": 3, "character": 11 }));

    let hover = client.call("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": on_invocation }));
    let markdown = hover["contents"]["value"].as_str().expect("markdown");
    assert!(markdown.contains("I sign in with the demo account"), "{markdown}");

    let on_step = position_of(&text, "I export the orders", 3);
    let hover = client.call("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": on_step }));
    let markdown = hover["contents"]["value"].as_str().expect("markdown");
    assert!(markdown.contains("✓ recorded") && markdown.contains("click button \"Export orders\""), "{markdown}");

    let references = client.call(
        "textDocument/references",
        json!({ "textDocument": { "uri": uri }, "position": on_invocation, "context": { "includeDeclaration": true } }),
    );
    assert!(references.as_array().is_some_and(|r| r.len() >= 3), "{references}");

    // Rename a recorded step: the feature edit, and the recording rewritten on disk.
    let prepared =
        client.call("textDocument/prepareRename", json!({ "textDocument": { "uri": uri }, "position": on_step }));
    assert_eq!(prepared["placeholder"], "I export the orders");
    let edit = client.call(
        "textDocument/rename",
        json!({ "textDocument": { "uri": uri }, "position": on_step, "newName": "I export all orders" }),
    );
    let changes = edit["changes"].as_object().expect("changes");
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[&uri][0]["newText"], "I export all orders");
    let recording =
        std::fs::read_to_string(root.join(".saffron/cache/orders/export-the-orders.json")).expect("recording");
    assert!(recording.contains("\"I export all orders\""));
    let parsed = saffron_recording::parse_recording(&recording).expect("still valid (digest recomputed)");
    assert_eq!(parsed.steps[3].text, "I export all orders");

    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn malformed_requests_get_error_replies_and_the_server_lives_on() {
    let root = example_project("lsp-robust");
    let mut client = start_saffron_lsp(&root);
    client.initialize();
    let uri = client.open("features/sign_in.feature");

    let missing = client.request("textDocument/completion", json!({ "textDocument": {} }));
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    let unknown = client.request("saffron/noSuchMethod", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let not_a_file = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": "untitled:1" }, "position": { "line": 0, "character": 0 } }),
    );
    assert!(not_a_file.get("error").is_some(), "{not_a_file}");
    let far = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 9999, "character": 9999 } }),
    );
    assert!(far.get("error").is_none(), "a position past the end is clamped: {far}");
    client.send_raw(b"{ this is not json");
    let parse_error = client.wait_for(|m| m["error"]["code"] == -32700);
    assert_eq!(parse_error["id"], Value::Null);
    client.send_raw(br#"{"jsonrpc":"2.0","id":77,"method":5}"#);
    let invalid = client.wait_for(|m| m["id"] == 77);
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");

    // Still answering.
    let symbols = client.call("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
    assert_eq!(symbols[0]["name"], "Sign in");
    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn utf16_positions_formatting_tokens_lenses_and_folding() {
    let root = example_project("lsp-utf16");
    let path = root.join("features/emoji.feature");
    std::fs::write(&path, "Feature: 😀 Émoji\n  Scenario: 😀 s\n    Given I am on the sign-in page\n   |a|bb|\n")
        .expect("write");
    let mut client = start_saffron_lsp(&root);
    client.initialize();
    let uri = client.open("features/emoji.feature");
    let symbols = client.call("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
    // "  Scenario: " is 12 units; the emoji is 2: the name "😀 s" ends at 16.
    assert_eq!(symbols[0]["children"][0]["selectionRange"]["end"], json!({ "line": 1, "character": 16 }));

    let formatted = client.call(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 2, "insertSpaces": true } }),
    );
    assert_eq!(
        formatted[0]["newText"],
        "Feature: 😀 Émoji\n  Scenario: 😀 s\n    Given I am on the sign-in page\n      | a | bb |\n"
    );

    let full = client.call("textDocument/semanticTokens/full", json!({ "textDocument": { "uri": uri } }));
    let data = full["data"].as_array().expect("data");
    assert!(data.len() >= 5 && data.len().is_multiple_of(5));
    let delta = client.call(
        "textDocument/semanticTokens/full/delta",
        json!({ "textDocument": { "uri": uri }, "previousResultId": full["resultId"] }),
    );
    assert_eq!(delta["edits"], json!([]), "nothing changed: {delta}");

    let lenses = client.call("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
    let commands: Vec<&str> =
        lenses.as_array().into_iter().flatten().filter_map(|l| l["command"]["command"].as_str()).collect();
    assert_eq!(commands, ["saffron.runFeature", "saffron.run"]);
    assert_eq!(lenses[1]["command"]["arguments"], json!(["features/emoji.feature:2"]));

    let folding = client.call("textDocument/foldingRange", json!({ "textDocument": { "uri": uri } }));
    assert!(folding.as_array().is_some_and(|f| !f.is_empty()));
    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_recording_written_on_disk_shows_up_live() {
    let root = example_project("lsp-watch");
    let recording = root.join(".saffron/cache/sign-in/sign-in-with-the-demo-account.json");
    let saved = std::fs::read_to_string(&recording).expect("recording");
    std::fs::remove_file(&recording).expect("remove");
    let mut client = start_saffron_lsp(&root);
    client.initialize();
    let uri = client.open("features/sign_in.feature");
    let text = std::fs::read_to_string(root.join("features/sign_in.feature")).expect("read");
    let on_step = position_of(&text, "I see no console errors", 2);
    let hover = |client: &mut LspClient| {
        let hover = client.call("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": on_step }));
        hover["contents"]["value"].as_str().unwrap_or_default().to_string()
    };
    assert!(hover(&mut client).contains("unrecorded"));
    // A recording made in a terminal: the file appears, the client tells the server.
    std::fs::write(&recording, saved).expect("write");
    client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": uri_of(&recording), "type": 1 }] }));
    let lenses = client.call("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
    assert!(lenses.to_string().contains("replays for free"), "{lenses}");
    assert!(hover(&mut client).contains("✓ recorded"));
    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

fn uri_of(path: &std::path::Path) -> String {
    uri(path)
}

#[test]
fn a_five_thousand_line_file_is_served() {
    let root = example_project("lsp-large");
    let mut text = String::from("Feature: Large\n");
    for n in 0..1250 {
        text.push_str(&format!(
            "  Scenario: s{n}\n    Given I am on the sign-in page\n    When I search orders for \"n{n}\"\n"
        ));
    }
    assert!(text.lines().count() >= 3750);
    text.push_str(&"  # filler\n".repeat(1300));
    std::fs::write(root.join("features/large.feature"), &text).expect("write");
    let mut client = start_saffron_lsp(&root);
    client.initialize();
    let uri = client.open("features/large.feature");
    let last = text.lines().count() - 1;
    for round in 0..5 {
        client.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri, "version": round + 2 },
                "contentChanges": [{ "range": { "start": { "line": last, "character": 0 }, "end": { "line": last, "character": 0 } }, "text": "    Then I se" }]
            }),
        );
        let completion = client.call(
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri }, "position": { "line": last, "character": 13 } }),
        );
        assert!(labels(&completion).contains(&"I see the orders page".to_string()));
    }
    let diagnostics = client.diagnostics_for(&uri, |_| true);
    assert!(diagnostics.iter().all(|d| d["severity"] != 1), "no errors expected");
    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

/// `body` under a header that states `length` as given.
fn framed_as(length: &str, body: &str) -> Vec<u8> {
    format!("Content-Length: {length}\r\n\r\n{body}").into_bytes()
}

fn hover_request(id: u64, uri: &str) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": {
        "textDocument": { "uri": uri }, "position": { "line": 0, "character": 3 } } })
    .to_string()
}

fn frame_of(body: &str) -> Vec<u8> {
    framed_as(&body.len().to_string(), body)
}

#[test]
fn a_wrong_content_length_gets_an_error_and_the_session_goes_on() {
    let (root, mut client, uri, _) = opened("lsp-lengths", "features/sign_in.feature");
    let still_answering = |client: &mut LspClient| {
        let symbols = client.call("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
        assert_eq!(symbols[0]["name"], "Sign in");
    };

    // Too short: the rest of the message sits in front of the next header.
    let message = hover_request(601, &uri);
    client.send_bytes(&[framed_as("25", &message), frame_of(&hover_request(602, &uri))].concat());
    let short = client.wait_for(|m| m["id"] == 601);
    assert_eq!(short["error"]["code"], -32700, "{short}");
    assert!(short["error"]["message"].as_str().is_some_and(|m| m.contains("Content-Length 25")), "{short}");
    let next = client.wait_for(|m| m["id"] == 602);
    assert!(next.get("error").is_none(), "the frame after it is read as it is: {next}");
    still_answering(&mut client);

    // Too long: the frame swallows the start of the next one.
    let message = hover_request(603, &uri);
    let long = (message.len() + 30).to_string();
    client.send_bytes(&[framed_as(&long, &message), frame_of(&hover_request(604, &uri))].concat());
    assert_eq!(client.wait_for(|m| m["id"] == 603)["error"]["code"], -32700);
    assert!(client.wait_for(|m| m["id"] == 604).get("error").is_none());

    // Too long, and nothing follows: answered once the client has been quiet for a moment.
    let message = hover_request(605, &uri);
    client.send_bytes(&framed_as(&(message.len() + 1000).to_string(), &message));
    assert_eq!(client.wait_for(|m| m["id"] == 605)["error"]["code"], -32700);
    still_answering(&mut client);

    // Not a number, and no length at all.
    client.send_bytes(&framed_as("a lot", &hover_request(606, &uri)));
    let not_a_number = client.wait_for(|m| m["id"] == 606);
    assert!(not_a_number["error"]["message"].as_str().is_some_and(|m| m.contains("not a number")), "{not_a_number}");
    client.send_bytes(format!("Content-Type: x\r\n\r\n{}", hover_request(607, &uri)).as_bytes());
    assert_eq!(client.wait_for(|m| m["id"] == 607)["error"]["code"], -32700);
    still_answering(&mut client);

    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_lone_surrogate_gets_an_error_and_the_session_goes_on() {
    let (root, mut client, uri, _) = opened("lsp-surrogates", "features/sign_in.feature");
    // `\ud800` is a legal JSON escape, but no Unicode text: the message cannot be read.
    let bodies = [
        (
            None,
            r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"URI","languageId":"gherkin","version":3,"text":"Feature: \ud800"}}}"#,
        ),
        (
            None,
            r#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"URI","version":4},"contentChanges":[{"text":"Feature: \udfff x"}]}}"#,
        ),
        (
            Some(701),
            r#"{"jsonrpc":"2.0","id":701,"method":"textDocument/hover","params":{"textDocument":{"uri":"URI\ud800"},"position":{"line":0,"character":1}}}"#,
        ),
        (
            Some(702),
            r#"{"jsonrpc":"2.0","id":702,"method":"textDocument/completion","params":{"textDocument":{"uri":"URI"},"position":{"line":0,"character":1},"context":{"triggerKind":2,"triggerCharacter":"\ud83d"}}}"#,
        ),
    ];
    for (id, body) in bodies {
        client.send_raw(body.replace("URI", &uri).as_bytes());
        let reply = match id {
            Some(id) => client.wait_for(|m| m["id"] == id),
            None => client.wait_for(|m| m["error"]["code"] == -32700 && m["id"].is_null()),
        };
        assert_eq!(reply["error"]["code"], -32700, "{reply}");
        // The session goes on, with the document as it was.
        let symbols = client.call("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
        assert_eq!(symbols[0]["name"], "Sign in", "{body}");
    }
    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

/// Every folder under `root`, relative to it.
fn folders(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).expect("read dir").flatten() {
            if entry.path().is_dir() {
                found.push(entry.path().strip_prefix(root).expect("inside").to_path_buf());
                stack.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn starting_creates_no_folders_in_the_workspace() {
    let root = example_project("lsp-no-folders");
    std::fs::remove_dir_all(root.join(".saffron")).expect("a project that has no .saffron yet");
    let before = folders(&root);
    let mut client = start_saffron_lsp(&root);
    client.initialize();
    let uri = client.open("features/sign_in.feature");
    client.diagnostics_for(&uri, |_| true);
    client.call("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
    let recording = root.join(".saffron/cache/sign-in/x.json");
    client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": uri_of(&recording), "type": 3 }] }));
    assert_eq!(client.shutdown(), Some(0));
    assert_eq!(folders(&root), before);
    let _ = std::fs::remove_dir_all(&root);
}

/// Clients that start a server over stdio may pass `--stdio` (vscode-languageclient does with
/// `TransportKind.stdio`): the server takes it and serves as usual.
#[test]
fn the_stdio_flag_language_clients_pass_is_accepted() {
    let root = example_project("lsp-stdio-flag");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_saffron"));
    command.args(["lsp", "--stdio"]);
    let mut client = LspClient::spawn(command, &root);
    let initialized = client.initialize();
    assert!(initialized["capabilities"]["completionProvider"].is_object(), "{initialized}");
    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

fn execute(client: &mut LspClient, command: &str, arguments: Value) -> Value {
    client.request("workspace/executeCommand", json!({ "command": command, "arguments": arguments }))
}

fn shown(client: &mut LspClient, needle: &str) -> Value {
    client.wait_for(|m| {
        m["method"] == "window/showMessage" && m["params"]["message"].as_str().is_some_and(|t| t.contains(needle))
    })
}

#[test]
fn the_server_executes_the_lens_commands() {
    let root = example_project("lsp-commands");
    // A run that waits in its setup hook until the test lets it go, then fails there: the
    // server must answer while it runs, and report how it ended.
    std::fs::write(
        root.join("saffron.toml"),
        "base_url = \"http://127.0.0.1:9\"\n[hooks]\nsetup = \"while [ ! -e release ]; do sleep 0.05; done; exit 3\"\n",
    )
    .expect("write");
    let mut client = start_saffron_lsp(&root);
    let mut capabilities = LspClient::vscode_capabilities();
    capabilities["window"] = json!({ "workDoneProgress": true, "showMessage": {} });
    let init = client.initialize_with(capabilities);
    let offered = init["capabilities"]["executeCommandProvider"]["commands"].clone();
    assert_eq!(
        offered,
        json!([
            "saffron.run",
            "saffron.runFeature",
            "saffron.reviewProposal",
            "saffron.accept",
            "saffron.reject",
            "saffron.authorSelection",
            "saffron.history"
        ])
    );
    let uri = client.open("features/sign_in.feature");
    let lenses = client.call("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
    let run = lenses
        .as_array()
        .into_iter()
        .flatten()
        .find(|lens| lens["command"]["command"] == "saffron.run")
        .unwrap_or_else(|| panic!("a run lens: {lenses}"))["command"]
        .clone();

    let started = execute(&mut client, "saffron.run", run["arguments"].clone());
    assert_eq!(started["result"], Value::Null, "answered at once: {started}");
    let label = format!("saffron run {}", run["arguments"][0].as_str().expect("a target"));
    client.wait_for(|m| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "begin");
    // The run is waiting in its setup hook: the loop still answers.
    let symbols = client.call("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
    assert_eq!(symbols[0]["name"], "Sign in");
    assert!(!client.received.iter().any(|m| m["method"] == "window/showMessage"), "the run is not over yet");
    std::fs::write(root.join("release"), "").expect("write");
    let verdict = shown(&mut client, &label);
    assert_eq!(verdict["params"]["type"], 1, "a failed setup is an error: {verdict}");
    assert!(verdict["params"]["message"].as_str().is_some_and(|m| m.contains("blocked")), "{verdict}");
    let ended = |m: &Value| m["method"] == "$/progress" && m["params"]["value"]["kind"] == "end";
    assert!(client.received.iter().any(ended), "the progress ends with the run");

    // `saffron accept` refuses a proposal it cannot read, and the user is told why.
    let proposal = ".saffron/proposals/sign-in/sign-in-with-the-demo-account.json";
    std::fs::create_dir_all(root.join(".saffron/proposals/sign-in")).expect("mkdir");
    std::fs::write(root.join(proposal), "{}").expect("write");
    assert_eq!(execute(&mut client, "saffron.accept", json!([proposal]))["result"], Value::Null);
    let refused = shown(&mut client, "saffron accept");
    assert_eq!(refused["params"]["type"], 1, "{refused}");
    let message = refused["params"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("refused: saffron accept: refused: the proposal") && message.contains("cannot be read"),
        "{refused}"
    );
    // A proposal that cannot be read, a path outside the project, an unknown command.
    let unreadable = execute(&mut client, "saffron.reviewProposal", json!([proposal]));
    assert_eq!(unreadable["error"]["code"], -32602, "{unreadable}");
    let outside = execute(&mut client, "saffron.reject", json!(["../../etc/passwd"]));
    assert_eq!(outside["error"]["code"], -32602, "{outside}");
    let option = execute(&mut client, "saffron.runFeature", json!(["--help"]));
    assert_eq!(option["error"]["code"], -32602, "{option}");
    assert_eq!(execute(&mut client, "saffron.nothing", json!(["x"]))["error"]["code"], -32602);

    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn commands_the_client_carries_out_itself_are_not_offered() {
    let root = example_project("lsp-own-commands");
    let mut client = start_saffron_lsp(&root);
    let mut capabilities = LspClient::vscode_capabilities();
    capabilities["experimental"] =
        json!({ "commands": { "commands": ["saffron.run", "saffron.runFeature", "saffron.reviewProposal"] } });
    let init = client.initialize_with(capabilities);
    assert_eq!(
        init["capabilities"]["executeCommandProvider"]["commands"],
        json!(["saffron.accept", "saffron.reject", "saffron.authorSelection", "saffron.history"])
    );
    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

/// The run history reaches the editor: a flaky scenario gets a lens with its recent verdicts, the
/// lens follows `history.jsonl` as runs append to it (a watched file), and its command says the
/// scenario's history.
#[test]
fn flaky_and_chronic_scenarios_have_a_history_lens_that_follows_the_runs() {
    let root = example_project("lsp-history");
    let history = root.join(".saffron/reports/history.jsonl");
    std::fs::create_dir_all(history.parent().expect("folder")).expect("mkdir");
    let run = |verdict: &str, flaky: bool| {
        json!({
            "time": "2026-12-05T10:00:00Z", "browser": "chromium", "file": "features/sign_in.feature", "line": 5,
            "name": "Sign in with the demo account", "verdict": verdict, "flaky": flaky, "attempts": 1,
            "durationMs": 900, "drift": 0
        })
        .to_string()
    };
    std::fs::write(&history, [run("green", false), run("green", true), run("green", false)].join("\n") + "\n")
        .expect("history");
    let mut client = start_saffron_lsp(&root);
    let mut capabilities = LspClient::vscode_capabilities();
    capabilities["window"] = json!({ "showMessage": {} });
    client.initialize_with(capabilities);
    let uri = client.open("features/sign_in.feature");
    let history_lens = |client: &mut LspClient| -> Vec<Value> {
        let lenses = client.call("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
        lenses
            .as_array()
            .into_iter()
            .flatten()
            .filter(|lens| lens["command"]["command"] == "saffron.history")
            .cloned()
            .collect()
    };
    let lenses = history_lens(&mut client);
    assert_eq!(lenses.len(), 1, "{lenses:?}");
    assert_eq!(lenses[0]["command"]["title"], "flaky: ✓≈✓ (last 3 runs)");
    assert_eq!(lenses[0]["range"]["start"]["line"], 4, "on the scenario's line");

    // Five troubled runs more: the scenario is chronic now (red or yellow in 5 of its 8 runs).
    let more = ["red", "red", "yellow", "red", "red"].map(|verdict| run(verdict, false)).join("\n") + "\n";
    let mut text = std::fs::read_to_string(&history).expect("history");
    text.push_str(&more);
    std::fs::write(&history, text).expect("history");
    client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": uri_of(&history), "type": 2 }] }));
    let lenses = history_lens(&mut client);
    assert_eq!(lenses[0]["command"]["title"], "chronic: ✓≈✓✗✗~✗✗ (last 8 runs)", "{lenses:?}");

    let arguments = lenses[0]["command"]["arguments"].clone();
    assert_eq!(execute(&mut client, "saffron.history", arguments)["result"], Value::Null);
    // Said before the command's answer: it is among the messages the client has received.
    let said = client
        .received
        .iter()
        .find(|m| {
            m["method"] == "window/showMessage"
                && m["params"]["message"]
                    .as_str()
                    .is_some_and(|t| t.contains("Sign in with the demo account: ✓≈✓✗✗~✗✗"))
        })
        .cloned()
        .unwrap_or_else(|| panic!("the history is said: {:?}", client.received));
    let message = said["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("chronic") && message.contains("flaky") && message.contains("1 flip(s)"), "{said}");
    assert_eq!(execute(&mut client, "saffron.history", json!(["features/sign_in.feature"]))["error"]["code"], -32602);
    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}

/// A change of `range` to `text` in the document at `uri`, as version `version`.
fn change(uri: &str, version: u32, start: (usize, usize), end: (usize, usize), text: &str) -> Value {
    json!({
        "textDocument": { "uri": uri, "version": version },
        "contentChanges": [{
            "range": { "start": { "line": start.0, "character": start.1 }, "end": { "line": end.0, "character": end.1 } },
            "text": text
        }]
    })
}

/// The diagnostics published for `uri` at `version`.
fn diagnostics_at(client: &mut LspClient, uri: &str, version: u32) -> Value {
    let published = client.wait_for(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri
            && m["params"]["version"] == version
    });
    published["params"]["diagnostics"].clone()
}

/// What a client sees of a document: its diagnostics, its semantic tokens, hovers and a
/// completion at `positions`.
fn seen(client: &mut LspClient, uri: &str, version: u32, positions: &[(usize, usize)]) -> Vec<Value> {
    let mut seen = vec![diagnostics_at(client, uri, version)];
    seen.push(
        client.call("textDocument/semanticTokens/full", json!({ "textDocument": { "uri": uri } }))["data"].clone(),
    );
    for &(line, character) in positions {
        let position = json!({ "line": line, "character": character });
        seen.push(client.call("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": position })));
        let completion =
            client.call("textDocument/completion", json!({ "textDocument": { "uri": uri }, "position": position }));
        seen.push(json!(labels(&completion)));
    }
    seen
}

/// Applies LSP semantic token edits to the data they were computed against.
fn apply_token_edits(data: &Value, edits: &Value) -> Value {
    let mut data: Vec<Value> = data.as_array().cloned().unwrap_or_default();
    let mut edits: Vec<&Value> = edits.as_array().into_iter().flatten().collect();
    edits.sort_by_key(|edit| std::cmp::Reverse(edit["start"].as_u64()));
    for edit in edits {
        let start = edit["start"].as_u64().unwrap_or(0) as usize;
        let deleted = edit["deleteCount"].as_u64().unwrap_or(0) as usize;
        let inserted = edit["data"].as_array().cloned().unwrap_or_default();
        data.splice(start..start + deleted, inserted);
    }
    Value::Array(data)
}

#[test]
fn edits_in_the_middle_of_a_large_file_end_where_a_fresh_open_starts() {
    let root = example_project("lsp-large-edits");
    let mut text = String::from("Feature: Large\n");
    for n in 0..3000 {
        text.push_str(&format!(
            "\n  Scenario: s{n}\n    Given I am on the sign-in page\n    When I search orders for \"n{n}\"\n    Then I see the orders page\n"
        ));
    }
    let lines = text.lines().count();
    assert!(lines >= 15_000);
    let middle = lines / 2;
    let middle =
        middle + (0..5).find(|k| text.lines().nth(middle + k).is_some_and(|l| l.contains("Then "))).expect("a Then");
    let mut client = start_saffron_lsp(&root);
    client.initialize();
    let uri = client.open_text("features/large.feature", &text);
    let before = client.call("textDocument/semanticTokens/full", json!({ "textDocument": { "uri": uri } }));

    // A step typed a character at a time after the middle line, asking for completion as an
    // editor does, and a hover now and then (it waits for the index to catch up).
    let mut version = 1;
    let mut edit = |client: &mut LspClient, start: (usize, usize), end: (usize, usize), new: &str| {
        version += 1;
        client.notify("textDocument/didChange", change(&uri, version, start, end, new));
    };
    let new_line = middle + 1;
    let line_end = text.lines().nth(middle).expect("the middle line").len();
    edit(&mut client, (middle, line_end), (middle, line_end), "\n    And ");
    for (typed, character) in "I should see the orders pag".chars().zip(8..) {
        edit(&mut client, (new_line, character), (new_line, character), &typed.to_string());
        let position = json!({ "line": new_line, "character": character + 1 });
        let completion =
            client.call("textDocument/completion", json!({ "textDocument": { "uri": uri }, "position": position }));
        assert!(completion["items"].is_array(), "{completion}");
        if character % 7 == 0 {
            client.call("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": position }));
        }
    }
    // Finished as a near-duplicate of a step the file writes 3000 times.
    edit(&mut client, (new_line, 35), (new_line, 35), "e");
    // A line no Gherkin keyword starts: a syntax error.
    edit(&mut client, (new_line + 1, 0), (new_line + 1, 0), "    Gven a typo\n");
    // Two lines further on merged into one, and a scenario pasted in.
    edit(&mut client, (new_line + 4, 10), (new_line + 5, 4), "");
    edit(
        &mut client,
        (new_line + 8, 0),
        (new_line + 8, 0),
        "  Scenario: 😀 pasted\n    Given I am on the sign-in page\n\n",
    );
    // A scenario renamed (UTF-16 columns after the emoji).
    edit(&mut client, (new_line + 8, 15), (new_line + 8, 21), "renamed");
    let final_version = version;
    let final_text = {
        // The same edits on the text, to open it fresh.
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines.insert(new_line, "    And I should see the orders page".to_string());
        lines.insert(new_line + 1, "    Gven a typo".to_string());
        let merged = format!("{}{}", &lines[new_line + 4][..10], &lines[new_line + 5][4..]);
        lines.splice(new_line + 4..new_line + 6, [merged]);
        lines.splice(
            new_line + 8..new_line + 8,
            ["  Scenario: 😀 renamed".to_string(), "    Given I am on the sign-in page".to_string(), String::new()],
        );
        lines.join("\n") + "\n"
    };
    let positions =
        [(new_line, 12), (new_line + 1, 6), (new_line + 4, 8), (new_line + 8, 16), (new_line + 9, 12), (lines - 3, 12)];
    let delta = client.call(
        "textDocument/semanticTokens/full/delta",
        json!({ "textDocument": { "uri": uri }, "previousResultId": before["resultId"] }),
    );
    let edited = seen(&mut client, &uri, final_version, &positions);
    assert_eq!(client.shutdown(), Some(0));

    let mut fresh = start_saffron_lsp(&root);
    fresh.initialize();
    let fresh_uri = fresh.open_text("features/large.feature", &final_text);
    let opened = seen(&mut fresh, &fresh_uri, 1, &positions);
    assert_eq!(fresh.shutdown(), Some(0));

    let codes: Vec<&str> = opened[0].as_array().into_iter().flatten().filter_map(|d| d["code"].as_str()).collect();
    assert!(codes.contains(&"near-duplicate"), "{codes:?}");
    assert!(codes.len() >= 2, "a syntax error and a near-duplicate at least: {codes:?}");
    for (index, (edited, opened)) in edited.iter().zip(&opened).enumerate() {
        // Not assert_eq: the tokens are thousands of numbers.
        assert!(edited == opened, "what is seen after the edits differs from a fresh open (item {index})");
    }
    // The tokens' delta against the text before the edits gives the same tokens too.
    assert!(delta["edits"].is_array(), "a delta, not whole tokens");
    assert!(apply_token_edits(&before["data"], &delta["edits"]) == opened[1], "the delta gives other tokens");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn completion_in_a_large_file_ranks_what_followed_the_step_above_as_typed() {
    let root = example_project("lsp-large-previous-step");
    let mut text = String::from("Feature: Large\n");
    for n in 0..1000 {
        text.push_str(&format!(
            "\n  Scenario: s{n}\n    Given I am on the sign-in page\n    When I search orders for \"n{n}\"\n    Then I see the orders page\n"
        ));
    }
    let middle = text.lines().count() / 2;
    let middle = middle + (0..5).find(|k| text.lines().nth(middle + k).is_some_and(str::is_empty)).expect("a blank");
    let mut client = start_saffron_lsp(&root);
    client.initialize();
    let uri = client.open_text("features/large.feature", &text);
    // Typed in the middle, and completed before the index has it: the step above (past its
    // table) is read from the editor's document. Elsewhere in the project (orders.saffron)
    // exporting the orders is followed by its check, once; the orders page follows a search
    // 1000 times in this file.
    let typed = "\n  Scenario: export\n    Given I am on the sign-in page\n    When I export the orders\n      | format |\n      | csv    |\n    Then ";
    client.notify("textDocument/didChange", change(&uri, 2, (middle, 0), (middle, 0), typed));
    let position = json!({ "line": middle + 6, "character": 9 });
    let completion =
        client.call("textDocument/completion", json!({ "textDocument": { "uri": uri }, "position": position }));
    let labels = labels(&completion);
    assert_eq!(labels.first().map(String::as_str), Some("I see that the export is ready"), "{labels:?}");
    assert_eq!(client.shutdown(), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}
