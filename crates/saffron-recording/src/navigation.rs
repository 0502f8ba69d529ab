//! Which URLs a replay may open: web pages over http and https, nothing else. A base URL or a
//! recorded `goto` that names `file:`, `javascript:`, `data:` or `ftp:` would let a run read
//! local files into its screenshots and reports, or run script outside the application.

/// The schemes a replay may navigate to.
pub const ALLOWED_SCHEMES: &[&str] = &["http", "https"];

/// The scheme of an absolute URL (`https` of `https://x`), lower-cased; `None` when `url` does
/// not start with one.
fn scheme(url: &str) -> Option<String> {
    let colon = url.find(':')?;
    let scheme = &url[..colon];
    let mut chars = scheme.chars();
    let valid = matches!(chars.next(), Some(first) if first.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| scheme.to_ascii_lowercase())
}

/// Why `url` cannot be a base URL, if it cannot: it must be an absolute http(s) URL with a
/// host.
pub fn base_url_problem(url: &str) -> Option<String> {
    let trimmed = url.trim();
    if trimmed.is_empty() {
        return Some("the base URL is empty: give the application's address, e.g. http://127.0.0.1:3000".into());
    }
    let Some(scheme) = scheme(trimmed) else {
        return Some(format!(
            "{url:?} is not an absolute URL: give the application's address with its scheme, e.g. http://{trimmed}"
        ));
    };
    if !ALLOWED_SCHEMES.contains(&scheme.as_str()) {
        return Some(format!("{url:?}: a base URL must be http:// or https://, not {scheme}:"));
    }
    let rest = &trimmed[scheme.len() + 1..];
    let host = rest.strip_prefix("//").map(|authority| authority.split(['/', '?', '#']).next().unwrap_or(""));
    match host {
        Some(host) if !host.is_empty() && !host.starts_with(':') && !host.ends_with('@') => {
            if trimmed.chars().any(char::is_whitespace) {
                Some(format!("{url:?} holds white space: percent-encode it or remove it"))
            } else {
                None
            }
        }
        _ => Some(format!("{url:?} has no host: write it as {scheme}://HOST[:PORT][/PATH]")),
    }
}

/// Why a replay may not navigate to `url` (a recorded `goto` after its tokens were filled in),
/// if it may not. URLs without a scheme are relative to the base URL and always allowed;
/// `about:blank` is allowed too.
pub fn navigation_problem(url: &str) -> Option<String> {
    let scheme = scheme(url)?;
    if ALLOWED_SCHEMES.contains(&scheme.as_str()) || url.eq_ignore_ascii_case("about:blank") {
        return None;
    }
    Some(format!("a replay opens only http and https pages, not {scheme}: URLs"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_must_be_http_or_https_with_a_host() {
        for good in ["http://127.0.0.1:3000", "https://shop.test/app?flow=guest", "HTTP://LOCALHOST"] {
            assert_eq!(base_url_problem(good), None, "{good}");
        }
        let problems = [
            ("", "the base URL is empty"),
            ("  ", "the base URL is empty"),
            ("not a url", "is not an absolute URL"),
            ("localhost:3000", "a base URL must be http:// or https://, not localhost:"),
            ("ftp://files.test", "not ftp:"),
            ("javascript:alert(1)", "not javascript:"),
            ("file:///etc/passwd", "not file:"),
            ("data:text/html,hi", "not data:"),
            ("http://", "has no host"),
            ("http:/x", "has no host"),
            ("https://:80/", "has no host"),
            ("http://a b", "white space"),
        ];
        for (url, expected) in problems {
            let problem = base_url_problem(url).unwrap_or_else(|| panic!("{url:?} was accepted"));
            assert!(problem.contains(expected), "{url:?}: {problem}");
        }
    }

    #[test]
    fn navigation_stays_on_the_web() {
        for good in ["/orders", "orders?x=1", "http://x.test/", "https://x.test", "about:blank", "ABOUT:BLANK"] {
            assert_eq!(navigation_problem(good), None, "{good}");
        }
        for bad in ["file:///etc/passwd", "javascript:alert(1)", "data:text/html,x", "ftp://x", "about:config"] {
            assert!(navigation_problem(bad).is_some(), "{bad} was allowed");
        }
    }
}
