//! A page's MHTML snapshot (`Page.captureSnapshot`) made into one HTML document the viewer can
//! show in a sandboxed frame, offline: each stylesheet, picture and frame the snapshot holds
//! goes inline as a `data:` address where the page names it, and scripts are left out.
//!
//! Every text part is masked before it is encoded: a secret in a stylesheet or a frame's HTML
//! would be out of the masker's reach once in base64.

use base64::Engine as _;
use mail_parser::{MessageParser, MimeHeaders, PartType};
use saffron_recording::Masker;

/// Parts larger than this (a big picture) stay as links, which do not load offline.
const PART_LIMIT: usize = 1024 * 1024;
/// All inlined parts together.
const TOTAL_LIMIT: usize = 6 * 1024 * 1024;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SnapshotError {
    #[error("it is not MIME")]
    NotMime,
    #[error("it holds no HTML document")]
    NoDocument,
}

struct Resource {
    location: String,
    content_type: String,
    data: Vec<u8>,
}

/// The snapshot's main document, self-contained and masked.
pub fn self_contained(mhtml: &str, masker: &Masker) -> Result<String, SnapshotError> {
    let message = MessageParser::default().parse(mhtml.as_bytes()).ok_or(SnapshotError::NotMime)?;
    let mut document: Option<String> = None;
    let mut resources = Vec::new();
    for part in &message.parts {
        if matches!(part.body, PartType::Multipart(_)) {
            continue;
        }
        let content_type = part
            .content_type()
            .map(|kind| match kind.subtype() {
                Some(sub) => format!("{}/{sub}", kind.ctype()),
                None => kind.ctype().to_owned(),
            })
            .unwrap_or_else(|| "application/octet-stream".to_owned());
        let is_text = content_type.starts_with("text/") || content_type.contains("svg");
        let data = if is_text {
            masker.mask(&String::from_utf8_lossy(part.contents())).into_bytes()
        } else {
            part.contents().to_vec()
        };
        if document.is_none() && content_type == "text/html" {
            document = Some(String::from_utf8_lossy(&data).into_owned());
            continue;
        }
        // A frame is named by its Content-ID (`cid:...`), anything else by its address.
        let mut names = Vec::new();
        if let Some(id) = part.content_id() {
            names.push(format!("cid:{id}"));
        }
        if let Some(location) = part.content_location() {
            names.push(location.to_owned());
        }
        for location in names {
            resources.push(Resource { location, content_type: content_type.clone(), data: data.clone() });
        }
    }
    let document = document.ok_or(SnapshotError::NoDocument)?;
    let mut html = without_scripts(&document);
    let mut inlined = 0;
    // The longest address first, so one that is a prefix of another does not cut it.
    resources.sort_by_key(|resource| std::cmp::Reverse(resource.location.len()));
    for resource in resources {
        if resource.data.len() > PART_LIMIT || inlined + resource.data.len() > TOTAL_LIMIT {
            continue;
        }
        let data = match resource.content_type.as_str() {
            "text/html" => without_scripts(&String::from_utf8_lossy(&resource.data)).into_bytes(),
            _ => resource.data,
        };
        let address = format!(
            "data:{};base64,{}",
            resource.content_type,
            base64::engine::general_purpose::STANDARD.encode(&data)
        );
        let mut replaced = false;
        for spelling in [resource.location.clone(), resource.location.replace('&', "&amp;")] {
            if html.contains(&spelling) {
                html = html.replace(&spelling, &address);
                replaced = true;
            }
        }
        if replaced {
            inlined += data.len();
        }
    }
    Ok(html)
}

/// The document without its `<script>` elements: the viewer's frame runs none anyway, and they
/// are most of a modern page's weight.
fn without_scripts(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len());
    let mut at = 0;
    while let Some(open) = lower[at..].find("<script").map(|found| found + at) {
        out.push_str(&html[at..open]);
        match lower[open..].find("</script>") {
            Some(close) => at = open + close + "</script>".len(),
            None => {
                at = html.len();
                break;
            }
        }
    }
    out.push_str(&html[at..]);
    out
}

#[cfg(test)]
mod tests {
    use saffron_recording::Secret;

    use super::*;

    const SNAPSHOT: &str = "From: <Saved by Blink>\r\n\
Snapshot-Content-Location: http://127.0.0.1:9/shop?a=1&b=2\r\n\
MIME-Version: 1.0\r\n\
Content-Type: multipart/related;\r\n\ttype=\"text/html\";\r\n\tboundary=\"----B\"\r\n\
\r\n\
------B\r\n\
Content-Type: text/html\r\n\
Content-ID: <frame-1@mhtml.blink>\r\n\
Content-Transfer-Encoding: quoted-printable\r\n\
Content-Location: http://127.0.0.1:9/shop?a=1&b=2\r\n\
\r\n\
<html><head><link rel=3D\"stylesheet\" href=3D\"http://127.0.0.1:9/app.css?v=3D1&amp;x=3Dy\"><script>alert(1)</script></head>=\r\n\
<body><p id=3D\"total\">Total: $12.00 for hunter22-key</p><iframe src=3D\"cid:frame-2@mhtml.blink\"></iframe></body></html>\r\n\
------B\r\n\
Content-Type: text/css\r\n\
Content-Transfer-Encoding: quoted-printable\r\n\
Content-Location: http://127.0.0.1:9/app.css?v=1&x=y\r\n\
\r\n\
p { color: red; } /* hunter22-key */\r\n\
------B\r\n\
Content-Type: text/html\r\n\
Content-ID: <frame-2@mhtml.blink>\r\n\
Content-Transfer-Encoding: quoted-printable\r\n\
\r\n\
<p>inner hunter22-key</p><SCRIPT src=3D\"x.js\"></SCRIPT>\r\n\
------B--\r\n";

    fn decoded_data(html: &str, kind: &str) -> String {
        let prefix = format!("data:{kind};base64,");
        let start = html.find(&prefix).expect("an inlined part") + prefix.len();
        let end = html[start..].find('"').map(|end| start + end).expect("the attribute ends");
        let bytes = base64::engine::general_purpose::STANDARD.decode(&html[start..end]).expect("base64");
        String::from_utf8(bytes).expect("text")
    }

    #[test]
    fn the_document_inlines_its_parts_masked_and_runs_no_script() {
        let mut masker = Masker::new();
        masker.add(&Secret { name: "KEY".into(), value: "hunter22-key".into() });
        let html = self_contained(SNAPSHOT, &masker).expect("a document");
        assert!(html.contains(r#"<p id="total">Total: $12.00 for "#), "{html}");
        assert!(!html.contains("hunter22-key"), "{html}");
        assert!(!html.to_ascii_lowercase().contains("<script"), "{html}");
        let css = decoded_data(&html, "text/css");
        assert!(css.contains("p { color: red; }") && !css.contains("hunter22-key"), "{css}");
        let frame = decoded_data(&html, "text/html");
        assert!(frame.contains("<p>inner ") && !frame.contains("hunter22-key"), "{frame}");
        assert!(!frame.to_ascii_lowercase().contains("<script"), "{frame}");
    }

    #[test]
    fn what_is_not_a_snapshot_says_so() {
        assert!(self_contained("", &Masker::new()).is_err());
        let plain = "Content-Type: text/plain\r\n\r\nhello\r\n";
        assert_eq!(self_contained(plain, &Masker::new()), Err(SnapshotError::NoDocument));
    }
}
