//! The context's network log, and matching responses against a [`ResponseMatcher`].

use regex::Regex;
use saffron_recording::ResponseMatcher;

use crate::url::{path_and_query, relativize_url};

/// One request of the context, filled in as its events arrive.
#[derive(Debug, Clone)]
pub(crate) struct NetEntry {
    /// The tab's target id (request ids are only unique per tab).
    pub target_id: String,
    pub request_id: String,
    pub method: String,
    pub url: String,
    /// Set when the response (or a redirect) arrives.
    pub status: Option<u16>,
    /// When the response arrived, in the context's event order; `None` until then.
    pub seq: Option<u64>,
    /// The body can be read (the load finished); redirects have no body.
    pub finished: bool,
    pub body: Body,
    /// A document the tab's main frame loaded (a page, not a resource of one).
    pub document: bool,
    /// When the request was seen to start, and its response to end (loaded, failed or
    /// redirected).
    pub started: std::time::SystemTime,
    pub ended: Option<std::time::SystemTime>,
    /// When its response (headers) arrived: its end when the load's own end never comes (a
    /// page that navigated away while it loaded).
    pub responded: Option<std::time::SystemTime>,
    /// Chromium's resource type, e.g. `Document`, `Fetch`, `Script`.
    pub resource_type: String,
    pub mime_type: Option<String>,
    /// Bytes received over the wire, once loaded.
    pub encoded_bytes: Option<u64>,
    /// Why the load failed.
    pub failure: Option<String>,
    /// A check read its body: a trace keeps that body.
    pub checked: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body {
    /// Not read yet.
    Unread,
    Text(String),
    /// Chromium no longer has it, or it is binary.
    Unavailable(String),
}

/// A matcher with its patterns compiled.
#[derive(Debug, Clone)]
pub(crate) struct Matcher<'g> {
    pub source: ResponseMatcher,
    url: Regex,
    body: Option<Regex>,
    /// URLs and bodies are masked before they are matched (a check the agent makes).
    judge: &'g crate::guard::Guard,
}

/// A matcher pattern that does not compile (the validator refuses these, so only a recording
/// built in code gets here).
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid {operand}: {source}")]
pub(crate) struct PatternError {
    /// `urlRegex` or `bodyRegex`.
    operand: &'static str,
    source: regex::Error,
}

impl<'g> Matcher<'g> {
    pub(crate) fn new(source: &ResponseMatcher, judge: &'g crate::guard::Guard) -> Result<Matcher<'g>, PatternError> {
        let compile = |operand, pattern: &str| {
            Regex::new(&judge.judged_pattern(pattern)).map_err(|source| PatternError { operand, source })
        };
        let url = compile("urlRegex", &source.url_regex)?;
        let body = match source.body_regex.as_deref() {
            Some(pattern) => Some(compile("bodyRegex", pattern)?),
            None => None,
        };
        Ok(Matcher { source: source.clone(), url, body, judge })
    }

    pub(crate) fn needs_body(&self) -> bool {
        self.body.is_some()
    }

    /// Everything but the body: method, status and URL (path + query, or the same relative to
    /// the base URL when the base has a path prefix or a default query).
    pub(crate) fn matches_head(&self, entry: &NetEntry, base_url: &str) -> bool {
        let Some(status) = entry.status else { return false };
        if let Some(method) = &self.source.method
            && !method.eq_ignore_ascii_case(&entry.method)
        {
            return false;
        }
        if !self.source.status_matches(status) {
            return false;
        }
        self.url.is_match(&self.judge.judged_owned(path_and_query(&entry.url)))
            || self.url.is_match(&self.judge.judged_owned(relativize_url(base_url, &entry.url)))
    }

    /// `Some(true/false)` once the body is known, `None` while it is not read yet.
    pub(crate) fn matches_body(&self, entry: &NetEntry) -> Option<bool> {
        let Some(pattern) = &self.body else { return Some(true) };
        match &entry.body {
            Body::Text(text) => Some(pattern.is_match(&self.judge.judged(text))),
            Body::Unavailable(_) => Some(false),
            Body::Unread => None,
        }
    }

    /// How the matcher reads in messages: `POST /^\/api\/orders$/ status 2xx body /READY/`.
    pub(crate) fn describe(&self) -> String {
        let mut out = String::new();
        if let Some(method) = &self.source.method {
            out.push_str(method);
            out.push(' ');
        }
        out.push_str(&format!("/{}/", self.source.url_regex));
        if let Some(status) = &self.source.status {
            out.push_str(&format!(" status {status}"));
        }
        if let Some(body) = &self.source.body_regex {
            out.push_str(&format!(" body /{body}/"));
        }
        out
    }
}

/// `GET /api/orders → 200`, for "found" lists.
pub(crate) fn describe_entry(entry: &NetEntry) -> String {
    match entry.status {
        Some(status) => format!("{} {} → {status}", entry.method, path_and_query(&entry.url)),
        None => format!("{} {} (no response yet)", entry.method, path_and_query(&entry.url)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(method: &str, url: &str, status: u16, body: Body) -> NetEntry {
        NetEntry {
            target_id: "t".into(),
            request_id: "r".into(),
            method: method.into(),
            url: url.into(),
            status: Some(status),
            seq: Some(0),
            finished: true,
            body,
            document: false,
            started: std::time::SystemTime::now(),
            ended: None,
            responded: None,
            resource_type: "Fetch".into(),
            mime_type: None,
            encoded_bytes: None,
            failure: None,
            checked: false,
        }
    }

    #[test]
    fn matches_method_status_path_and_body() {
        let source = ResponseMatcher {
            url_regex: r"^/api/exports/\d+$".into(),
            method: Some("GET".into()),
            status: Some("2xx".into()),
            body_regex: Some(r#""status":"READY""#.into()),
        };
        let unguarded = crate::guard::Guard::default();
        let matcher = Matcher::new(&source, &unguarded).expect("patterns compile");
        let base = "http://127.0.0.1:1";
        let running =
            entry("GET", "http://127.0.0.1:1/api/exports/3", 200, Body::Text(r#"{"status":"RUNNING"}"#.into()));
        let ready =
            entry("get", "http://127.0.0.1:1/api/exports/3", 200, Body::Text(r#"{"id":3,"status":"READY"}"#.into()));
        assert!(matcher.matches_head(&running, base));
        assert_eq!(matcher.matches_body(&running), Some(false));
        assert_eq!(matcher.matches_body(&ready), Some(true));
        assert!(!matcher.matches_head(&entry("POST", "http://127.0.0.1:1/api/exports/3", 200, Body::Unread), base));
        assert!(!matcher.matches_head(&entry("GET", "http://127.0.0.1:1/api/exports/3", 500, Body::Unread), base));
        assert!(!matcher.matches_head(&entry("GET", "http://127.0.0.1:1/api/exports/3?x=1", 200, Body::Unread), base));
        assert_eq!(matcher.matches_body(&entry("GET", "http://h/api/exports/3", 200, Body::Unread)), None);
        assert!(Matcher::new(&ResponseMatcher::url("("), &unguarded).is_err());
    }

    #[test]
    fn urls_match_relative_to_a_base_with_a_path_prefix() {
        let unguarded = crate::guard::Guard::default();
        let matcher = Matcher::new(&ResponseMatcher::url("^/api/orders$"), &unguarded).expect("compiles");
        let under_prefix = entry("GET", "https://shop.test/app/api/orders", 200, Body::Unread);
        assert!(matcher.matches_head(&under_prefix, "https://shop.test/app"));
        assert!(!matcher.matches_head(&under_prefix, "https://shop.test"));
    }
}
