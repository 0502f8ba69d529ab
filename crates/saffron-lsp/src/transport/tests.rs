use lsp_server::{ErrorCode, Message, RequestId};
use serde_json::{Value, json};

use super::{Framed, Framer, Incoming, read_message};

fn frame(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

fn request(id: i32) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": { "x": "y" } }).to_string()
}

/// What the framer makes of `input`, given `chunk` bytes at a time; `idle_at_end`: the client
/// then goes quiet.
fn framed(input: &[u8], chunk: usize, idle_at_end: bool) -> Vec<Framed<Value>> {
    let mut framer = Framer::default();
    let mut found = Vec::new();
    let read = |body: &[u8]| serde_json::from_slice::<Value>(body).ok();
    for piece in input.chunks(chunk) {
        framer.push(piece);
        while let Some(framed) = framer.next(false, read) {
            found.push(framed);
        }
    }
    if idle_at_end {
        while let Some(framed) = framer.next(true, read) {
            found.push(framed);
        }
    }
    found
}

fn read_ids(found: &[Framed<Value>]) -> Vec<Value> {
    found
        .iter()
        .map(|framed| match framed {
            Framed::Read(value) => value["id"].clone(),
            Framed::Bad { bytes, .. } => json!(format!("bad {}", String::from_utf8_lossy(bytes))),
        })
        .collect()
}

#[test]
fn whole_frames_are_read_in_any_chunking() {
    let input = format!("{}\r\n\n{}", frame(&request(1)), frame(&request(2)));
    for chunk in [1, 7, 4096] {
        let found = framed(input.as_bytes(), chunk, false);
        assert_eq!(read_ids(&found), [json!(1), json!(2)], "chunk {chunk}");
    }
    // LF line ends and other headers are fine too.
    let input = format!("content-length:  {}\nContent-Type: x\n\n{}", request(3).len(), request(3));
    assert_eq!(read_ids(&framed(input.as_bytes(), 5, false)), [json!(3)]);
}

#[test]
fn a_length_too_short_takes_the_message_up_to_the_next_header() {
    let message = request(7);
    let input = format!("Content-Length: 20\r\n\r\n{message}{}", frame(&request(8)));
    for chunk in [1, 9, 4096] {
        let found = framed(input.as_bytes(), chunk, false);
        assert_eq!(found.len(), 2, "chunk {chunk}: {found:?}");
        let Framed::Bad { bytes, problem } = &found[0] else { panic!("{found:?}") };
        assert_eq!(String::from_utf8_lossy(bytes), message, "the whole message, so its id can be read");
        assert!(problem.contains("Content-Length 20"), "{problem}");
        assert_eq!(found[1], Framed::Read(serde_json::from_str(&request(8)).expect("json")));
    }
}

#[test]
fn a_length_too_long_ends_at_the_next_header_or_when_the_client_goes_quiet() {
    let message = request(7);
    let long = format!("Content-Length: {}\r\n\r\n{message}", message.len() + 40);
    let input = format!("{long}{}", frame(&request(8)));
    for chunk in [1, 9, 4096] {
        let found = framed(input.as_bytes(), chunk, false);
        assert_eq!(found.len(), 2, "chunk {chunk}: {found:?}");
        assert!(matches!(&found[0], Framed::Bad { bytes, .. } if *bytes == message.as_bytes()), "{found:?}");
        assert_eq!(read_ids(&found[1..]), [json!(8)]);
    }
    // Nothing follows: the frame waits until the client has been quiet for a while.
    assert!(framed(long.as_bytes(), 4096, false).is_empty());
    let found = framed(long.as_bytes(), 4096, true);
    assert!(matches!(&found[..], [Framed::Bad { bytes, .. }] if *bytes == message.as_bytes()), "{found:?}");
}

#[test]
fn a_length_that_is_no_number_ends_with_the_message() {
    let message = request(7);
    for header in ["Content-Length: abc", "Content-Length: -5", "Content-Length: 99999999999999", "Content-Type: x"] {
        let input = format!("{header}\r\n\r\n{message}{}", frame(&request(8)));
        let found = framed(input.as_bytes(), 3, false);
        assert_eq!(found.len(), 2, "{header}: {found:?}");
        assert!(matches!(&found[0], Framed::Bad { bytes, .. } if *bytes == message.as_bytes()), "{found:?}");
        assert_eq!(read_ids(&found[1..]), [json!(8)]);
    }
}

#[test]
fn a_bad_length_is_named_in_the_problem() {
    let message = request(7);
    for (header, expected) in [
        ("Content-Length: abc", "Content-Length \"abc\" is not a number of bytes"),
        ("Content-Length: 99999999999999", "Content-Length 99999999999999 is more than a message may be"),
        ("Content-Type: x", "the frame has no Content-Length"),
    ] {
        let found = framed(format!("{header}\r\n\r\n{message}").as_bytes(), 5, true);
        assert!(matches!(&found[0], Framed::Bad { problem, .. } if problem == expected), "{header}: {found:?}");
    }
}

#[test]
fn bytes_outside_frames_are_one_error_and_reading_goes_on() {
    for stuck in ["null", "-0", "}]"] {
        let input = format!("{stuck}{}", frame(&request(4)));
        let found = framed(input.as_bytes(), 3, false);
        assert_eq!(read_ids(&found), [json!(format!("bad {stuck}")), json!(4)], "{stuck}");
    }
    let input = format!("}} garbage \"x\" {}", frame(&request(2)));
    let found = framed(input.as_bytes(), 4, false);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(matches!(&found[0], Framed::Bad { bytes, .. } if bytes.starts_with(b"} garbage")), "{found:?}");
    assert_eq!(read_ids(&found[1..]), [json!(2)]);
    // A body that is not JSON, with the right length.
    let input = format!("{}{}", frame("{ not json"), frame(&request(3)));
    let found = framed(input.as_bytes(), 4096, false);
    assert!(matches!(&found[0], Framed::Bad { bytes, .. } if *bytes == b"{ not json"), "{found:?}");
    assert_eq!(read_ids(&found[1..]), [json!(3)]);
}

#[test]
fn a_slow_message_is_waited_for_even_when_its_text_names_a_header() {
    // A document whose text holds a header: inside a JSON string a newline is escaped, so it
    // is no header line.
    let body = json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "text": "Given the response has\nContent-Length: 5\r\n\r\n{ and a brace" } })
    .to_string();
    let input = frame(&body);
    let (start, rest) = input.split_at(input.len() / 2);
    let mut framer = Framer::default();
    let read = |body: &[u8]| serde_json::from_slice::<Value>(body).ok();
    framer.push(start.as_bytes());
    assert_eq!(framer.next(false, read), None);
    assert_eq!(framer.next(true, read), None, "a message on its way is not cut short");
    framer.push(rest.as_bytes());
    assert!(matches!(framer.next(false, read), Some(Framed::Read(_))));
    assert!(!framer.has_pending());
}

fn malformed(body: &str) -> (Option<RequestId>, i32) {
    match read_message(body.as_bytes()) {
        Some(Incoming::Malformed { id, error }) => (id, error.code),
        other => panic!("{body}: {other:?}"),
    }
}

#[test]
fn bodies_that_are_no_message_get_the_error_and_the_id() {
    assert!(matches!(read_message(request(1).as_bytes()), Some(Incoming::Message(Message::Request(_)))));
    assert!(read_message(b"{ not json").is_none(), "not JSON: the frame is suspect");
    let lone = r#"{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"x":"\ud800"}}"#;
    assert_eq!(malformed(lone), (Some(RequestId::from(5)), ErrorCode::ParseError as i32));
    let lone = r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"text":"a\udc00b"}}"#;
    assert_eq!(malformed(lone), (None, ErrorCode::ParseError as i32));
    assert_eq!(
        malformed(r#"{"jsonrpc":"2.0","id":"x","method":5}"#),
        (Some(RequestId::from("x".to_string())), ErrorCode::InvalidRequest as i32)
    );
    assert_eq!(malformed("[1,2]"), (None, ErrorCode::InvalidRequest as i32));
    assert_eq!(malformed(r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#), (None, ErrorCode::InvalidRequest as i32));
    assert_eq!(
        malformed(r#"{"jsonrpc":"2.0","id":1099511627776,"method":"x"}"#),
        (None, ErrorCode::InvalidRequest as i32)
    );
    assert_eq!(
        malformed(r#"{"jsonrpc":"1.0","id":3,"method":"x"}"#),
        (Some(RequestId::from(3)), ErrorCode::InvalidRequest as i32)
    );
    assert_eq!(malformed(r#"{"jsonrpc":"2.0","id":3,"id":4,"method":"x"}"#).1, ErrorCode::InvalidRequest as i32);
    assert_eq!(malformed(r#"{"jsonrpc":"2.0","id":3}"#), (Some(RequestId::from(3)), ErrorCode::InvalidRequest as i32));
    // A response to the server's own request, with a null result, and a notification.
    assert!(matches!(
        read_message(br#"{"jsonrpc":"2.0","id":0,"result":null}"#),
        Some(Incoming::Message(Message::Response(_)))
    ));
    assert!(matches!(
        read_message(br#"{"jsonrpc":"2.0","method":"exit"}"#),
        Some(Incoming::Message(Message::Notification(_)))
    ));
}
