//! What an action must respect beyond replay's own rules, where what asks for it may be
//! hostile (a model steered by the page it reads, a recording edited by hand): where a secret's
//! value may go, and how a check the agent makes is judged.

use std::borrow::Cow;
use std::sync::Arc;

use saffron_recording::Masker;
use url::{Origin, Url};

/// The origins a secret's value may be sent to or typed in: the application's (its base URL's)
/// and any the project lists (a sign-in provider).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretOrigins {
    origins: Vec<Origin>,
}

impl SecretOrigins {
    /// The base URL's origin and each of `more` (URLs or bare origins); an error names one that
    /// is not an http(s) URL.
    pub fn new(base_url: &str, more: &[String]) -> Result<SecretOrigins, String> {
        let mut origins = Vec::new();
        for url in std::iter::once(base_url).chain(more.iter().map(String::as_str)) {
            let origin = Url::parse(url.trim())
                .ok()
                .filter(|url| matches!(url.scheme(), "http" | "https"))
                .map(|url| url.origin())
                .filter(Origin::is_tuple)
                .ok_or_else(|| format!("`{url}` is not an http(s) origin"))?;
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        Ok(SecretOrigins { origins })
    }

    /// No origin at all: every secret is refused.
    pub fn none() -> SecretOrigins {
        SecretOrigins { origins: Vec::new() }
    }

    /// Whether the absolute `url` (or an origin such as `location.origin` gives it) is one of
    /// the origins. An opaque origin (`data:`, a sandboxed frame, `null`) never is.
    pub fn allows(&self, url: &str) -> bool {
        Url::parse(url).is_ok_and(|url| self.origins.contains(&url.origin()))
    }

    /// The origins, as a person reads them: `http://127.0.0.1:8080, https://login.example`.
    pub fn describe(&self) -> String {
        self.origins.iter().map(Origin::ascii_serialization).collect::<Vec<_>>().join(", ")
    }
}

/// The guards of one action; the default guards nothing (a replay without secrets, a tool).
#[derive(Debug, Clone, Default)]
pub struct Guard {
    /// Set when the action's values hold a secret: a `goto` may go only to these origins, and
    /// a value may be typed (filled, selected, pressed, answered to a prompt) only into a
    /// document of one of them, whichever frame it is in.
    pub secret_origins: Option<SecretOrigins>,
    /// Set for a check the agent makes: the page's text, values, URLs, response bodies and
    /// downloads are masked with it before they are compared, and so is what the check expects.
    /// A model that could test guesses against the secret itself (`…77` holds, `…78` does not)
    /// would read it a character at a time.
    pub judge_masked: Option<Masker>,
    /// Set for an agent's action in a run a person may take over: asked before each attempt
    /// and right before any input is dispatched, and the action fails, undispatched, as soon
    /// as it says no.
    pub fence: Option<Fence>,
    /// Set for an action of an interruption's handler: where it may act (see [`HandlerBounds`]);
    /// anywhere else it is refused, undispatched.
    pub inside: Option<HandlerBounds>,
}

/// Where an interruption's handler may act: inside the interruption while it shows (for an
/// element detector, inside the detector's dialog or overlay, else its frame's document; for an
/// address detector, on a page at that address), or on the page the handler's own `goto`
/// opened (a sign-in page it went to).
#[derive(Debug, Clone)]
pub struct HandlerBounds {
    /// The interruption's detector.
    pub detector: crate::Detector,
    /// The address the handler's last `goto` led to, if it made one.
    pub own_page: Option<String>,
}

/// Whether the action may still touch the page: `None` when it may, else why not (a person
/// took the browser over). It must be cheap: it is asked on every attempt.
#[derive(Clone)]
pub struct Fence(Arc<dyn Fn() -> Option<String> + Send + Sync>);

impl Fence {
    /// A fence that asks `refusal`.
    pub fn new(refusal: impl Fn() -> Option<String> + Send + Sync + 'static) -> Fence {
        Fence(Arc::new(refusal))
    }

    /// Why the action may not touch the page now, if it may not.
    pub fn refusal(&self) -> Option<String> {
        (self.0)()
    }
}

impl std::fmt::Debug for Fence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fence")
    }
}

impl Guard {
    /// `text` as the check compares it: masked when the check is judged masked, else itself
    /// (replay's checks pay nothing for the guard).
    pub(crate) fn judged<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.judge_masked {
            Some(masker) => Cow::Owned(masker.mask(text)),
            None => Cow::Borrowed(text),
        }
    }

    /// [`Guard::judged`] of a text the caller owns already.
    pub(crate) fn judged_owned(&self, text: String) -> String {
        match &self.judge_masked {
            Some(masker) => masker.mask(&text),
            None => text,
        }
    }

    /// A pattern as the check compiles it: each secret's spelling made to match its token.
    pub(crate) fn judged_pattern<'a>(&self, pattern: &'a str) -> Cow<'a, str> {
        match &self.judge_masked {
            Some(masker) => Cow::Owned(masker.mask_in_pattern(pattern)),
            None => Cow::Borrowed(pattern),
        }
    }

    /// The failure of an action whose fence says no: nothing of it is dispatched from here on.
    pub(crate) fn fenced(&self, verb: &str) -> Result<(), crate::error::ActionFailure> {
        let Some(refusal) = self.fence.as_ref().and_then(Fence::refusal) else { return Ok(()) };
        Err(crate::error::ActionFailure::new(
            crate::error::FailureKind::Refused,
            format!("{verb}: {refusal}; nothing was dispatched"),
        ))
    }

    /// Why a secret may not go to `url` (absolute), if it may not.
    pub(crate) fn refuses_destination(&self, url: &str) -> Option<String> {
        let origins = self.secret_origins.as_ref()?;
        (!origins.allows(url)).then(|| refusal(origins, url))
    }
}

/// The refusal of a secret bound for `destination` (a URL or an origin).
pub(crate) fn refusal(origins: &SecretOrigins, destination: &str) -> String {
    let origin =
        Url::parse(destination).map(|url| url.origin().ascii_serialization()).unwrap_or_else(|_| "null".into());
    format!(
        "refused: this action carries a secret, and a secret's value goes only to the application's origins ({}), \
         not to {origin}; if that origin is the application's too (a sign-in provider), list it under [secrets] \
         origins in saffron.toml",
        origins.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_urls_origin_and_the_listed_ones_are_allowed() {
        let origins =
            SecretOrigins::new("http://127.0.0.1:8080/shop?x=1", &["https://login.example.com".into()]).expect("valid");
        assert!(origins.allows("http://127.0.0.1:8080/login?d=x"));
        assert!(origins.allows("https://login.example.com/authorize"));
        assert!(origins.allows("https://login.example.com:443/"), "the default port is the same origin");
        for other in [
            "http://127.0.0.1:8081/steal?d=x",
            "https://127.0.0.1:8080/",
            "http://localhost:8080/",
            "http://evil.example/?u=http://127.0.0.1:8080/",
            "http://127.0.0.1:8080@evil.example/",
            "data:text/html,x",
            "null",
            "not a url",
        ] {
            assert!(!origins.allows(other), "{other}");
        }
        // Another spelling of the same host is the same origin (the URL standard's parser).
        assert!(origins.allows("http://2130706433:8080/"));
        assert_eq!(origins.describe(), "http://127.0.0.1:8080, https://login.example.com");
        assert!(SecretOrigins::new("file:///etc", &[]).is_err());
        assert!(SecretOrigins::new("http://a", &["javascript:x".into()]).is_err());
    }

    #[test]
    fn a_fence_that_says_no_fails_the_action_undispatched() {
        let open = Guard { fence: Some(Fence::new(|| None)), ..Guard::default() };
        assert!(open.fenced("click").is_ok());
        assert!(Guard::default().fenced("click").is_ok(), "no fence, nothing asked");
        let closed = Guard { fence: Some(Fence::new(|| Some("a person took over".into()))), ..Guard::default() };
        let failure = closed.fenced("click").expect_err("fenced");
        assert_eq!(failure.kind, crate::error::FailureKind::Refused);
        assert_eq!(failure.message, "click: a person took over; nothing was dispatched");
    }

    #[test]
    fn a_judged_check_compares_masked_text() {
        let masker: Masker =
            [saffron_recording::Secret { name: "TOKEN".into(), value: "plainSecret77".into() }].iter().collect();
        let guard = Guard { judge_masked: Some(masker), ..Guard::default() };
        assert_eq!(guard.judged("and plainSecret77"), "and {env:TOKEN}");
        let pattern = regex::Regex::new(&guard.judged_pattern("and plainSecret7\\d")).expect("compiles");
        assert!(!pattern.is_match(&guard.judged("and plainSecret77")), "a guess is not tested against the value");
        let token = regex::Regex::new(&guard.judged_pattern("and plainSecret77$")).expect("compiles");
        assert!(token.is_match("and {env:TOKEN}"));
        assert_eq!(Guard::default().judged("and plainSecret77"), "and plainSecret77");
    }
}
