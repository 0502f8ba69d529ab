//! Masking secret values out of text on its way to a person, a model or a file.
//!
//! A secret rarely reaches an output as it was typed: a JSON report escapes its quotes, an HTML
//! report its ampersands, a URL percent-encodes it, a failure message may quote it Rust- or
//! shell-style. The masker knows each of those spellings (and the same spellings once more
//! inside JSON or markup, for a report embedded in another) and replaces every one.

use aho_corasick::{AhoCorasick, MatchKind};

use crate::resolve::Secret;

/// Replaces every occurrence of a known secret value, in any spelling an output gives it, by
/// its `{env:NAME}` token.
///
/// Values shorter than [`Masker::MIN_LEN`] characters are not masked: masking `1` or `ok`
/// would shred every report while protecting nothing worth protecting. Spellings that change
/// the letters themselves (upper-casing, base64, hashing) are not recognized.
#[derive(Clone, Default)]
pub struct Masker {
    /// The secrets in the order they were added: the first name of a value wins.
    secrets: Vec<Secret>,
    /// Every spelling of every secret, and the token it is replaced by.
    spellings: Vec<(String, String)>,
    matcher: Option<AhoCorasick>,
    /// Per secret, its value (as is, quote-escaped, JSON-escaped) with any white space between
    /// its characters, and its token: a page that splits a value over two elements is read back
    /// with a space or a line break where they meet.
    loose: Vec<(Loose, String)>,
}

/// One secret's loose pattern, for text and for bytes.
#[derive(Clone)]
struct Loose {
    text: regex::Regex,
    bytes: regex::bytes::Regex,
}

impl std::fmt::Debug for Masker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.secrets.iter().map(|secret| secret.name.as_str()).collect();
        f.debug_struct("Masker").field("secrets", &names).finish_non_exhaustive()
    }
}

impl Masker {
    /// The shortest value, in characters, that is masked.
    pub const MIN_LEN: usize = 3;

    /// A masker with no secrets.
    pub fn new() -> Masker {
        Masker::default()
    }

    /// Mask `secret` from now on. Adding a value twice keeps its first name.
    pub fn add(&mut self, secret: &Secret) {
        self.add_with_token(secret, format!("{{env:{}}}", secret.name));
    }

    /// Show `value` as `token` from now on, in every spelling a secret is masked in: an Outline
    /// value as its `<customer>`, so that what the model reads holds no customer data. Such a
    /// value is shown as its token, not a secret: [`Masker::scrub_recording`] leaves it alone
    /// (a recording holds its tokens already), and [`Masker::find`] names it by its token.
    pub fn add_as(&mut self, value: &str, token: &str) {
        let shown = Secret { name: token.to_owned(), value: value.to_owned() };
        self.add_with_token(&shown, token.to_owned());
    }

    fn add_with_token(&mut self, secret: &Secret, token: String) {
        if secret.value.chars().count() < Masker::MIN_LEN || self.secrets.iter().any(|s| s.value == secret.value) {
            return;
        }
        self.secrets.push(secret.clone());
        for spelling in spellings(&secret.value) {
            if !self.spellings.iter().any(|(known, _)| *known == spelling) {
                self.spellings.push((spelling, token.clone()));
            }
        }
        if let Some(loose) = loose_pattern(&secret.value) {
            self.loose.push((loose, token.clone()));
        }
        // Leftmost-longest: a secret that contains another one is masked whole, and of two
        // spellings that start at one place the longer wins.
        self.matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(self.spellings.iter().map(|(spelling, _)| spelling))
            .ok();
    }

    /// Mask every secret in `secrets` from now on.
    pub fn add_all<'s>(&mut self, secrets: impl IntoIterator<Item = &'s Secret>) {
        for secret in secrets {
            self.add(secret);
        }
    }

    /// True when there is nothing to mask.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// The secrets, first name of each value, in the order they were added (the values shown
    /// as tokens with [`Masker::add_as`] left out).
    pub(crate) fn secrets(&self) -> impl Iterator<Item = &Secret> {
        self.secrets.iter().filter(|secret| !secret.name.starts_with('<'))
    }

    /// Where the first spelling of a secret in `text` is (byte range), and the name of the
    /// secret: for a check that names the place without showing the value.
    pub fn find(&self, text: &str) -> Option<(std::ops::Range<usize>, &str)> {
        let matcher = self.matcher.as_ref().filter(|_| !self.secrets.is_empty())?;
        let exact = matcher.find(text).map(|found| (found.range(), &self.spellings[found.pattern().as_usize()].1));
        let loose =
            self.loose.iter().filter_map(|(loose, token)| loose.text.find(text).map(|found| (found.range(), token)));
        let (range, token) = exact.into_iter().chain(loose).min_by_key(|(range, _)| range.start)?;
        let name = token.strip_prefix("{env:").and_then(|rest| rest.strip_suffix('}')).unwrap_or(token);
        Some((range, name))
    }

    /// Every spelling of every secret (the values themselves among them), for hiding them on a
    /// screen, where a page may show one escaped or encoded. Never print them.
    pub fn spellings(&self) -> impl Iterator<Item = &str> {
        self.spellings.iter().map(|(spelling, _)| spelling.as_str())
    }

    /// The secret values as they were substituted, for hiding them on a screen. Never print
    /// them.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.secrets.iter().map(|secret| secret.value.as_str())
    }

    /// `text` with every spelling of every secret replaced by its token, leftmost first.
    pub fn mask(&self, text: &str) -> String {
        let mut masked = match &self.matcher {
            Some(matcher) if !self.secrets.is_empty() => {
                let tokens: Vec<&str> = self.spellings.iter().map(|(_, token)| token.as_str()).collect();
                matcher.replace_all(text, &tokens)
            }
            _ => return text.to_string(),
        };
        for (loose, token) in &self.loose {
            if loose.text.is_match(&masked) {
                masked = loose.text.replace_all(&masked, regex::NoExpand(token)).into_owned();
            }
        }
        masked
    }

    /// A regular expression with every spelling of every secret replaced by a pattern that
    /// matches its token literally: a pattern the agent wrote, to be matched against masked
    /// text.
    pub fn mask_in_pattern(&self, pattern: &str) -> String {
        match &self.matcher {
            Some(matcher) if !self.secrets.is_empty() => {
                let tokens: Vec<String> = self.spellings.iter().map(|(_, token)| regex::escape(token)).collect();
                matcher.replace_all(pattern, &tokens)
            }
            _ => pattern.to_string(),
        }
    }

    /// [`Masker::mask`] on bytes that may not all be UTF-8 (a file being written): only
    /// complete spellings are replaced, other bytes pass through.
    pub fn mask_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let mut masked = match &self.matcher {
            Some(matcher) if !self.secrets.is_empty() => {
                let tokens: Vec<&[u8]> = self.spellings.iter().map(|(_, token)| token.as_bytes()).collect();
                matcher.replace_all_bytes(bytes, &tokens)
            }
            _ => return bytes.to_vec(),
        };
        for (loose, token) in &self.loose {
            if loose.bytes.is_match(&masked) {
                masked = loose.bytes.replace_all(&masked, regex::bytes::NoExpand(token.as_bytes())).into_owned();
            }
        }
        masked
    }
}

impl<'s> FromIterator<&'s Secret> for Masker {
    fn from_iter<I: IntoIterator<Item = &'s Secret>>(secrets: I) -> Masker {
        let mut masker = Masker::new();
        masker.add_all(secrets);
        masker
    }
}

/// Every spelling of `value` an output may give it: as is, then each escaping once, then JSON,
/// Debug and markup escaping applied once more to those (a JSON report quoted in a JSON-RPC
/// message, an HTML page embedding an XML report).
fn spellings(value: &str) -> Vec<String> {
    // A page or a message that normalizes white space may do it before or after escaping: the
    // two commute, so escaping the normalized value covers both.
    let mut bases = vec![value.to_owned()];
    push_new(&mut bases, whitespace_collapsed(value));
    let mut first = bases.clone();
    for base in &bases {
        for escape in ESCAPES {
            for spelling in escape(base) {
                push_new(&mut first, spelling);
            }
        }
    }
    let mut all = first.clone();
    for spelling in &first {
        for escape in NESTING_ESCAPES {
            for nested in escape(spelling) {
                push_new(&mut all, nested);
            }
        }
    }
    all
}

/// The value as is, quote-escaped and JSON-escaped, each with any white space allowed between
/// its characters; `None` for a value with fewer than [`Masker::MIN_LEN`] visible characters.
fn loose_pattern(value: &str) -> Option<Loose> {
    let visible: Vec<char> = value.chars().filter(|c| !c.is_whitespace()).collect();
    if visible.len() < Masker::MIN_LEN {
        return None;
    }
    let json = json_escaped(value).into_iter().next().unwrap_or_default();
    let mut alternatives: Vec<String> = Vec::new();
    for spelling in [value.to_owned(), value.replace('"', "\\\""), json] {
        let parts: Vec<String> =
            spelling.chars().filter(|c| !c.is_whitespace()).map(|c| regex::escape(&c.to_string())).collect();
        let pattern = parts.join(r"\s*");
        if !alternatives.contains(&pattern) {
            alternatives.push(pattern);
        }
    }
    let pattern = alternatives.join("|");
    let text = regex::Regex::new(&pattern).ok()?;
    let bytes = regex::bytes::Regex::new(&pattern).ok()?;
    Some(Loose { text, bytes })
}

fn push_new(list: &mut Vec<String>, spelling: String) {
    if !list.contains(&spelling) {
        list.push(spelling);
    }
}

type Escape = fn(&str) -> Vec<String>;

const ESCAPES: &[Escape] =
    &[json_escaped, markup_escaped, url_encoded, shell_quoted, debug_escaped, regex_escaped, quote_escaped];
const NESTING_ESCAPES: &[Escape] = &[json_escaped, markup_escaped, debug_escaped];

/// As text read back from a page or a message that normalizes white space (a tab or a line
/// break as one space, runs of spaces as one).
fn whitespace_collapsed(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Inside a JSON string: serde_json's and JavaScript's spelling (non-ASCII as is), and the
/// ASCII-only spelling of Python's `json.dumps` and others (`\u00e9`, surrogate pairs).
fn json_escaped(value: &str) -> Vec<String> {
    let quoted = serde_json::to_string(value).unwrap_or_default();
    let plain = quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or_default().to_owned();
    let mut ascii = String::with_capacity(plain.len());
    for c in plain.chars() {
        if c.is_ascii() {
            ascii.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                ascii.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    // A JavaScript string may also spell `/` as `\/`.
    let slashed = plain.replace('/', "\\/");
    vec![plain, ascii, slashed]
}

/// Inside HTML or XML text or an attribute, with each common spelling of the quotes.
fn markup_escaped(value: &str) -> Vec<String> {
    let base = value.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let mut out = Vec::new();
    for quote in ["\"", "&quot;", "&#34;", "&#x22;"] {
        for apostrophe in ["'", "&#39;", "&apos;", "&#x27;"] {
            out.push(base.replace('"', quote).replace('\'', apostrophe));
        }
    }
    out
}

/// In a URL or a form body: RFC 3986 components, `encodeURIComponent`, `encodeURI`, form
/// encoding (space as `+`), lower-case hex digits, and each WHATWG URL percent-encode set, the
/// spelling a browser gives a value in that part of a URL it serialises (Chromium writes
/// `Kx"Vn\Qm` in a query as `Kx%22Vn\Qm`).
fn url_encoded(value: &str) -> Vec<String> {
    use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
    const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
    const URI_COMPONENT: &AsciiSet =
        &COMPONENT.remove(b'!').remove(b'*').remove(b'\'').remove(b'(').remove(b')').add(b'~');
    const URI: &AsciiSet = &URI_COMPONENT
        .remove(b'~')
        .remove(b';')
        .remove(b'/')
        .remove(b'?')
        .remove(b':')
        .remove(b'@')
        .remove(b'&')
        .remove(b'=')
        .remove(b'+')
        .remove(b'$')
        .remove(b',')
        .remove(b'#');
    // https://url.spec.whatwg.org/#percent-encoded-bytes: each set is the one before it plus a
    // few characters. `CONTROLS` is the C0 control set (non-ASCII is always encoded).
    const FRAGMENT: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'<').add(b'>').add(b'`');
    const QUERY: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'#').add(b'<').add(b'>');
    const SPECIAL_QUERY: &AsciiSet = &QUERY.add(b'\'');
    // The path set before and after the spec added `^` to it (browsers differ).
    const PATH_BEFORE_CARET: &AsciiSet = &QUERY.add(b'?').add(b'`').add(b'{').add(b'}');
    const PATH: &AsciiSet = &PATH_BEFORE_CARET.add(b'^');
    const USERINFO: &AsciiSet =
        &PATH.add(b'/').add(b':').add(b';').add(b'=').add(b'@').add(b'[').add(b'\\').add(b']').add(b'|');
    const WHATWG_COMPONENT: &AsciiSet = &USERINFO.add(b'$').add(b'%').add(b'&').add(b'+').add(b',');
    const FORM: &AsciiSet = &WHATWG_COMPONENT.add(b'!').add(b'\'').add(b'(').add(b')').add(b'~');
    let component = utf8_percent_encode(value, COMPONENT).to_string();
    let uri_component = utf8_percent_encode(value, URI_COMPONENT).to_string();
    let uri = utf8_percent_encode(value, URI).to_string();
    let form = component.replace("%20", "+");
    let lower = lowercase_hex(&component);
    let mut spellings = vec![component, uri_component, uri, form, lower];
    for set in [FRAGMENT, QUERY, SPECIAL_QUERY, PATH_BEFORE_CARET, PATH, USERINFO, WHATWG_COMPONENT] {
        spellings.push(utf8_percent_encode(value, set).to_string());
    }
    spellings.push(utf8_percent_encode(value, FORM).to_string().replace("%20", "+"));
    spellings.sort();
    spellings.dedup();
    spellings
}

fn lowercase_hex(encoded: &str) -> String {
    let mut out = String::with_capacity(encoded.len());
    let mut rest = encoded;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at..at + 3).unwrap_or(&rest[at..]);
        out.push_str(&escape.to_ascii_lowercase());
        rest = &rest[at + escape.len()..];
    }
    out.push_str(rest);
    out
}

/// Inside a shell word: single-quoted (`'\''` and `'"'"'` for a quote), double-quoted, and
/// backslash-escaped.
fn shell_quoted(value: &str) -> Vec<String> {
    let single = value.replace('\'', "'\\''");
    let single_python = value.replace('\'', "'\"'\"'");
    let double: String = value
        .chars()
        .flat_map(|c| match c {
            '"' | '\\' | '$' | '`' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    let backslashed: String = value
        .chars()
        .flat_map(|c| if c.is_ascii_alphanumeric() || "-._/,:@%+=".contains(c) { vec![c] } else { vec!['\\', c] })
        .collect();
    vec![single, single_python, double, backslashed]
}

/// Inside a double-quoted name where only the quote is escaped (the agent's snapshot, many
/// loggers).
fn quote_escaped(value: &str) -> Vec<String> {
    vec![value.replace('"', "\\\"")]
}

/// Inside a regular expression that matches the value literally (a recorded pattern).
fn regex_escaped(value: &str) -> Vec<String> {
    vec![regex::escape(value)]
}

/// Inside Rust's `{:?}` of a string or a char.
fn debug_escaped(value: &str) -> Vec<String> {
    let quoted = format!("{value:?}");
    let plain = quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or_default().to_owned();
    let with_apostrophes = plain.replace('\'', "\\'");
    vec![plain, with_apostrophes]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str, value: &str) -> Secret {
        Secret { name: name.into(), value: value.into() }
    }

    fn masking(value: &str) -> Masker {
        [secret("PASSWORD", value)].iter().collect()
    }

    #[test]
    fn masks_every_occurrence() {
        let mut masker = Masker::new();
        assert!(masker.is_empty());
        masker.add(&secret("PASSWORD", "hunter22"));
        assert_eq!(
            masker.mask("typed hunter22 into Password; hunter22!"),
            "typed {env:PASSWORD} into Password; {env:PASSWORD}!"
        );
        assert_eq!(masker.mask("nothing here"), "nothing here");
    }

    #[test]
    fn a_value_added_as_a_token_is_shown_as_it_in_every_spelling_and_is_no_secret() {
        let mut masker = Masker::new();
        masker.add(&secret("PASSWORD", "hunter22"));
        masker.add_as("Margaret Hamilton", "<customer>");
        assert_eq!(
            masker.mask("textbox \"Customer\": Margaret Hamilton, /orders?q=Margaret%20Hamilton, hunter22"),
            "textbox \"Customer\": <customer>, /orders?q=<customer>, {env:PASSWORD}"
        );
        // Split over two elements, read back with a line break.
        assert_eq!(masker.mask("Margaret\nHamilton"), "<customer>");
        assert_eq!(masker.find("for Margaret Hamilton").map(|(_, name)| name), Some("<customer>"));
        let secrets: Vec<&str> = masker.secrets().map(|secret| secret.name.as_str()).collect();
        assert_eq!(secrets, vec!["PASSWORD"], "a value shown as a token is not a secret");
    }

    #[test]
    fn short_values_are_not_masked() {
        let secrets = [secret("PIN", "42"), secret("EMPTY", ""), secret("ABC", "é€x")];
        let masker: Masker = secrets.iter().collect();
        assert_eq!(masker.mask("42 é€x"), "42 {env:ABC}");
    }

    #[test]
    fn longest_secret_wins_and_duplicates_keep_the_first_name() {
        let mut masker = Masker::new();
        masker.add(&secret("USER", "ada"));
        masker.add(&secret("EMAIL", "ada@example.com"));
        masker.add(&secret("ALIAS", "ada"));
        assert_eq!(masker.mask("ada@example.com / ada"), "{env:EMAIL} / {env:USER}");
        assert_eq!(masker.mask("ada%40example.com"), "{env:EMAIL}");
    }

    #[test]
    fn multibyte_text_around_secrets() {
        let mut masker = Masker::new();
        masker.add(&secret("TOKEN", "s€cr€t"));
        assert_eq!(masker.mask("ü s€cr€t ü"), "ü {env:TOKEN} ü");
    }

    /// A value with every character some output escapes, in each spelling an output gives it.
    const AWKWARD: &str = "pa\"ss\\w'o<r>d&1 \t€/x";

    #[test]
    fn json_spellings_are_masked() {
        let masker = masking(AWKWARD);
        let json =
            serde_json::to_string(&serde_json::json!({ "message": format!("typed {AWKWARD}") })).expect("serializes");
        assert_eq!(masker.mask(&json), r#"{"message":"typed {env:PASSWORD}"}"#);
        // Read back with its white space normalized.
        assert_eq!(masker.mask("typed pa\"ss\\w'o<r>d&1 €/x."), "typed {env:PASSWORD}.");
        // ASCII-only JSON (Python's json.dumps) and JSON inside JSON.
        assert_eq!(masker.mask(r#"pa\"ss\\w'o<r>d&1 \t\u20ac/x"#), "{env:PASSWORD}");
        let twice = serde_json::to_string(&json).expect("serializes");
        assert!(!masker.mask(&twice).contains("ss\\"), "{}", masker.mask(&twice));
        assert!(masker.mask(&twice).contains("{env:PASSWORD}"));
    }

    #[test]
    fn markup_spellings_are_masked() {
        let masker = masking(AWKWARD);
        for spelling in [
            "pa&quot;ss\\w&#39;o&lt;r&gt;d&amp;1 \t€/x",
            "pa&quot;ss\\w&apos;o&lt;r&gt;d&amp;1 \t€/x",
            "pa\"ss\\w'o&lt;r&gt;d&amp;1 \t€/x",
            "pa&#x22;ss\\w&#x27;o&lt;r&gt;d&amp;1 \t€/x",
        ] {
            assert_eq!(masker.mask(&format!("<p>{spelling}</p>")), "<p>{env:PASSWORD}</p>", "{spelling}");
        }
        // A JSON message inside HTML.
        assert_eq!(masker.mask("pa\\&quot;ss\\\\w&#39;o&lt;r&gt;d&amp;1 \\t€/x"), "{env:PASSWORD}");
    }

    #[test]
    fn url_spellings_are_masked() {
        let masker = masking(AWKWARD);
        for spelling in [
            "pa%22ss%5Cw%27o%3Cr%3Ed%261%20%09%E2%82%AC%2Fx",
            "pa%22ss%5Cw'o%3Cr%3Ed%261%20%09%E2%82%AC%2Fx",
            "pa%22ss%5Cw'o%3Cr%3Ed&1%20%09%E2%82%AC/x",
            "pa%22ss%5Cw%27o%3Cr%3Ed%261+%09%E2%82%AC%2Fx",
            "pa%22ss%5cw%27o%3cr%3ed%261%20%09%e2%82%ac%2fx",
        ] {
            assert_eq!(masker.mask(&format!("http://h/?q={spelling}&n=1")), "http://h/?q={env:PASSWORD}&n=1");
        }
    }

    #[test]
    fn whatwg_url_spellings_are_masked() {
        // As Chromium prints a page URL with the secret in its query.
        let masker = masking("Kx\"Vn\\Qm7zz");
        assert_eq!(masker.mask("http://h/?d=Kx%22Vn\\Qm7zz&n=1"), "http://h/?d={env:PASSWORD}&n=1");
        // Each set of the URL standard, on a value with a character each set differs by.
        let masker = masking("a b\"#<>'?`{}^/:;=@[\\]|$%&+,!()~z");
        for spelling in [
            // fragment
            "a%20b%22#%3C%3E'?%60{}^/:;=@[\\]|$%&+,!()~z",
            // query
            "a%20b%22%23%3C%3E'?`{}^/:;=@[\\]|$%&+,!()~z",
            // special-query
            "a%20b%22%23%3C%3E%27?`{}^/:;=@[\\]|$%&+,!()~z",
            // path, before and after `^` joined it
            "a%20b%22%23%3C%3E'%3F%60%7B%7D^/:;=@[\\]|$%&+,!()~z",
            "a%20b%22%23%3C%3E'%3F%60%7B%7D%5E/:;=@[\\]|$%&+,!()~z",
            // userinfo
            "a%20b%22%23%3C%3E'%3F%60%7B%7D%5E%2F%3A%3B%3D%40%5B%5C%5D%7C$%&+,!()~z",
            // component
            "a%20b%22%23%3C%3E'%3F%60%7B%7D%5E%2F%3A%3B%3D%40%5B%5C%5D%7C%24%25%26%2B%2C!()~z",
            // application/x-www-form-urlencoded
            "a+b%22%23%3C%3E%27%3F%60%7B%7D%5E%2F%3A%3B%3D%40%5B%5C%5D%7C%24%25%26%2B%2C%21%28%29%7Ez",
        ] {
            assert_eq!(masker.mask(&format!("<{spelling}>")), "<{env:PASSWORD}>", "{spelling}");
        }
    }

    #[test]
    fn a_value_split_by_white_space_or_quote_escaped_is_masked() {
        let masker = masking("vault-Kx\"Vn\\Qm7zz");
        // Two elements' texts joined with a space or a line break, as a snapshot reads them.
        assert_eq!(masker.mask("p: vault-Kx\"V n\\Qm7zz."), "p: {env:PASSWORD}.");
        assert_eq!(masker.mask("vault-\n  Kx\"Vn\\Qm7 zz"), "{env:PASSWORD}");
        // A name quoted with only its quotes escaped.
        assert_eq!(masker.mask("button \"Copy vault-Kx\\\"Vn\\Qm7zz\""), "button \"Copy {env:PASSWORD}\"");
        assert_eq!(masker.mask_bytes(b"x vault-Kx\"Vn \\Qm7zz"), b"x {env:PASSWORD}".to_vec());
        let (range, name) = masker.find("ab vault-Kx\"V\tn\\Qm7zz").expect("found");
        assert_eq!((range.start, name), (3, "PASSWORD"));
        // Fewer than three characters once white space is left out: not masked loosely.
        assert_eq!(masking("a b").mask("a  b"), "a  b");
    }

    #[test]
    fn shell_and_debug_spellings_are_masked() {
        let masker = masking(AWKWARD);
        let debug = format!("{:?}", AWKWARD);
        assert_eq!(masker.mask(&format!("Fill({debug})")), "Fill(\"{env:PASSWORD}\")");
        assert_eq!(masker.mask(&format!("{:?}", format!("x {AWKWARD}"))), "\"x {env:PASSWORD}\"");
        for spelling in
            ["'pa\"ss\\w'\\''o<r>d&1 \t€/x'", "'pa\"ss\\w'\"'\"'o<r>d&1 \t€/x'", "\"pa\\\"ss\\\\w'o<r>d&1 \t€/x\""]
        {
            let masked = masker.mask(&format!("curl -d {spelling}"));
            assert!(masked.contains("{env:PASSWORD}") && !masked.contains("ss"), "{spelling} -> {masked}");
        }
        let plain = masking("hunter2-word");
        assert_eq!(plain.mask("echo hunter2-word"), "echo {env:PASSWORD}");
    }

    #[test]
    fn bytes_are_masked() {
        let masker = masking("hunter22");
        let mut bytes = b"\xff\xfe hunter22 \x00".to_vec();
        bytes = masker.mask_bytes(&bytes);
        assert_eq!(bytes, b"\xff\xfe {env:PASSWORD} \x00".to_vec());
    }

    #[test]
    fn debug_never_shows_a_value() {
        let masker = masking("hunter22");
        assert!(!format!("{masker:?}").contains("hunter22"));
        assert_eq!(masker.values().collect::<Vec<_>>(), ["hunter22"]);
    }
}
