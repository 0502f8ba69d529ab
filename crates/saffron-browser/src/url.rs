//! The base URL is a prefix: origin + path prefix + default query.
//!
//! Recordings store plain paths (`/orders`), and the same recording must replay against any
//! environment, including one mounted under a path (`https://host/shop`) or selected by a query
//! (`?flow=checkout-guest`). `new URL(path, base)` semantics would drop the base's path for a
//! leading-slash path and its query always, so a recording made against one variant could never
//! replay against another (design log, 2026-09-24). Hence these two functions, each the other's
//! inverse for URLs under the base:
//!
//! - `/` is the base URL itself;
//! - `/rooms` is the base's path prefix + `/rooms`, with the base's query;
//! - a relative URL with its own query keeps it, and a bare `?` means "no query" under a base
//!   that has one.
//!
//! URLs are split by hand rather than parsed with a URL library on purpose: a parser normalizes
//! (percent-encoding, default ports, trailing slashes) and the strings compared in `expectUrl`
//! must stay the ones the page and the recording actually hold.

/// An absolute URL with an authority, split into its parts (`scheme://authority` is the origin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parts<'a> {
    origin: &'a str,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

/// True for `scheme:...` (`http://x`, `data:...`, `about:blank`): a URL that needs no base.
fn has_scheme(url: &str) -> bool {
    let Some(colon) = url.find(':') else { return false };
    let scheme = &url[..colon];
    let mut chars = scheme.chars();
    matches!(chars.next(), Some(first) if first.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Splits `path?query#fragment` (any of the three may be empty or absent).
fn split_tail(tail: &str) -> (&str, Option<&str>, Option<&str>) {
    let (rest, fragment) = match tail.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (tail, None),
    };
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    (path, query, fragment)
}

fn split_url(url: &str) -> Option<Parts<'_>> {
    let scheme_end = url.find("://")?;
    if !has_scheme(&url[..=scheme_end]) {
        return None;
    }
    let authority_start = scheme_end + 3;
    let authority_end =
        url[authority_start..].find(['/', '?', '#']).map(|index| authority_start + index).unwrap_or(url.len());
    let (path, query, fragment) = split_tail(&url[authority_end..]);
    Some(Parts { origin: &url[..authority_end], path, query, fragment })
}

/// A query that is present and not empty: `?` alone and no `?` both mean "no query".
fn non_empty(query: Option<&str>) -> Option<&str> {
    query.filter(|query| !query.is_empty())
}

/// Resolves a recorded URL against the base URL, which is treated as a prefix (see the module
/// docs). Absolute URLs (`https://…`, `data:…`, `about:blank`) are returned unchanged; a
/// base that is not an absolute `scheme://` URL leaves `url` unchanged too.
///
/// ```
/// use saffron_browser::resolve_url;
/// let base = "https://shop.test/app?flow=guest";
/// assert_eq!(resolve_url(base, "/"), "https://shop.test/app?flow=guest");
/// assert_eq!(resolve_url(base, "/rooms"), "https://shop.test/app/rooms?flow=guest");
/// assert_eq!(resolve_url(base, "/rooms?sort=price"), "https://shop.test/app/rooms?sort=price");
/// assert_eq!(resolve_url(base, "/rooms?"), "https://shop.test/app/rooms");
/// ```
pub fn resolve_url(base: &str, url: &str) -> String {
    if has_scheme(url) {
        return url.to_owned();
    }
    let Some(base_parts) = split_url(base) else {
        return url.to_owned();
    };
    if let Some(rest) = url.strip_prefix("//") {
        let scheme = &base_parts.origin[..base_parts.origin.find(':').unwrap_or(0)];
        return format!("{scheme}://{rest}");
    }
    let prefix = base_parts.path.trim_end_matches('/');
    let (path, query, fragment) = split_tail(url);
    let mut resolved = String::from(base_parts.origin);
    match path {
        // `/` (or no path at all: `?q`, `#top`) is the base URL itself.
        "" | "/" => resolved.push_str(if base_parts.path.is_empty() { "/" } else { base_parts.path }),
        _ => {
            resolved.push_str(prefix);
            if !path.starts_with('/') {
                resolved.push('/');
            }
            resolved.push_str(path);
        }
    }
    // A URL with its own `?` decides the query, even a bare one ("no query"); otherwise the
    // base's default query applies.
    let query = if query.is_some() { non_empty(query) } else { non_empty(base_parts.query) };
    if let Some(query) = query {
        resolved.push('?');
        resolved.push_str(query);
    }
    if let Some(fragment) = fragment {
        resolved.push('#');
        resolved.push_str(fragment);
    }
    resolved
}

/// The inverse of [`resolve_url`]: the URL as a recording would store it, relative to the base
/// URL when it lies under the base's origin and path prefix, else unchanged.
///
/// ```
/// use saffron_browser::relativize_url;
/// let base = "https://shop.test/app?flow=guest";
/// assert_eq!(relativize_url(base, "https://shop.test/app?flow=guest"), "/");
/// assert_eq!(relativize_url(base, "https://shop.test/app/rooms?flow=guest"), "/rooms");
/// assert_eq!(relativize_url(base, "https://shop.test/app/rooms"), "/rooms?");
/// assert_eq!(relativize_url(base, "https://other.test/app"), "https://other.test/app");
/// ```
pub fn relativize_url(base: &str, url: &str) -> String {
    let (Some(base_parts), Some(parts)) = (split_url(base), split_url(url)) else {
        return url.to_owned();
    };
    if !base_parts.origin.eq_ignore_ascii_case(parts.origin) {
        return url.to_owned();
    }
    let prefix = base_parts.path.trim_end_matches('/');
    let Some(rest) = parts.path.strip_prefix(prefix) else {
        return url.to_owned();
    };
    // `/app` must not claim `/application`: the prefix ends at a segment boundary.
    if !(rest.is_empty() || rest.starts_with('/')) {
        return url.to_owned();
    }
    let mut relative = if rest.is_empty() { String::from("/") } else { String::from(rest) };
    match (non_empty(parts.query), non_empty(base_parts.query)) {
        (own, default) if own == default => {}
        (None, Some(_)) => relative.push('?'),
        (Some(own), _) => {
            relative.push('?');
            relative.push_str(own);
        }
        (None, None) => {}
    }
    if let Some(fragment) = parts.fragment {
        relative.push('#');
        relative.push_str(fragment);
    }
    relative
}

/// The path and query of an absolute URL (what `urlRegex` patterns are matched against, since
/// scheme and host differ between environments); other strings are returned unchanged.
pub(crate) fn path_and_query(url: &str) -> String {
    match split_url(url) {
        Some(parts) => {
            let mut out = String::from(if parts.path.is_empty() { "/" } else { parts.path });
            if let Some(query) = parts.query {
                out.push('?');
                out.push_str(query);
            }
            out
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_against_a_bare_origin() {
        let base = "http://127.0.0.1:8080";
        assert_eq!(resolve_url(base, "/"), "http://127.0.0.1:8080/");
        assert_eq!(resolve_url(base, "/orders"), "http://127.0.0.1:8080/orders");
        assert_eq!(resolve_url(base, "/orders?q=ada"), "http://127.0.0.1:8080/orders?q=ada");
        assert_eq!(resolve_url(base, "/orders#top"), "http://127.0.0.1:8080/orders#top");
        assert_eq!(resolve_url("http://127.0.0.1:8080/", "/orders"), "http://127.0.0.1:8080/orders");
    }

    #[test]
    fn the_base_is_a_prefix_with_a_default_query() {
        let base = "https://book.test/hotel?flow=checkout-guest";
        assert_eq!(resolve_url(base, "/"), base);
        assert_eq!(resolve_url(base, "/rooms"), "https://book.test/hotel/rooms?flow=checkout-guest");
        assert_eq!(resolve_url(base, "/rooms?size=2"), "https://book.test/hotel/rooms?size=2");
        assert_eq!(resolve_url(base, "/rooms?"), "https://book.test/hotel/rooms");
        assert_eq!(resolve_url(base, "/?flow=standard"), "https://book.test/hotel?flow=standard");
        assert_eq!(resolve_url(base, "rooms"), "https://book.test/hotel/rooms?flow=checkout-guest");
        // A trailing slash on the base's path is kept for `/` and not doubled for the rest.
        let slashed = "https://book.test/hotel/";
        assert_eq!(resolve_url(slashed, "/"), "https://book.test/hotel/");
        assert_eq!(resolve_url(slashed, "/rooms"), "https://book.test/hotel/rooms");
    }

    #[test]
    fn absolute_urls_are_kept() {
        let base = "http://127.0.0.1:8080/app";
        for url in ["https://example.test/x?y", "about:blank", "data:text/html,<p>hi</p>"] {
            assert_eq!(resolve_url(base, url), url);
        }
        assert_eq!(resolve_url(base, "//cdn.test/a.js"), "http://cdn.test/a.js");
        assert_eq!(resolve_url("not a url", "/orders"), "/orders");
    }

    #[test]
    fn relativizes_under_the_prefix_only() {
        let base = "https://book.test/hotel?flow=guest";
        assert_eq!(relativize_url(base, "https://book.test/hotel?flow=guest"), "/");
        assert_eq!(relativize_url(base, "https://book.test/hotel/"), "/?");
        assert_eq!(relativize_url(base, "https://book.test/hotel/rooms?flow=guest"), "/rooms");
        assert_eq!(relativize_url(base, "https://book.test/hotel/rooms?flow=standard"), "/rooms?flow=standard");
        assert_eq!(relativize_url(base, "https://book.test/hotel/rooms"), "/rooms?");
        assert_eq!(relativize_url(base, "https://book.test/hotel/rooms?flow=guest#map"), "/rooms#map");
        assert_eq!(relativize_url(base, "https://book.test/hotels/rooms"), "https://book.test/hotels/rooms");
        assert_eq!(relativize_url(base, "https://other.test/hotel/rooms"), "https://other.test/hotel/rooms");
        assert_eq!(relativize_url(base, "about:blank"), "about:blank");
        let origin = "http://127.0.0.1:8080";
        assert_eq!(relativize_url(origin, "http://127.0.0.1:8080/login?expired=1"), "/login?expired=1");
        assert_eq!(relativize_url(origin, "http://127.0.0.1:8080/"), "/");
        assert_eq!(relativize_url(origin, "HTTP://127.0.0.1:8080/orders"), "/orders");
    }

    #[test]
    fn relativize_and_resolve_are_inverses_under_the_base() {
        let bases = ["http://127.0.0.1:8080", "https://book.test/hotel", "https://book.test/hotel?flow=guest"];
        let relatives = ["/", "/rooms", "/rooms?size=2", "/rooms/7#photos", "/?flow=standard"];
        for base in bases {
            for relative in relatives {
                let absolute = resolve_url(base, relative);
                let back = relativize_url(base, &absolute);
                assert_eq!(resolve_url(base, &back), absolute, "base {base}, relative {relative}");
            }
        }
        // A bare `?` survives the round trip as "no query" under a base that has one.
        let base = "https://book.test/hotel?flow=guest";
        assert_eq!(relativize_url(base, &resolve_url(base, "/rooms?")), "/rooms?");
    }

    #[test]
    fn path_and_query_drops_scheme_host_and_fragment() {
        assert_eq!(path_and_query("http://127.0.0.1:9/api/orders?q=ada#x"), "/api/orders?q=ada");
        assert_eq!(path_and_query("http://127.0.0.1:9"), "/");
        assert_eq!(path_and_query("data:text/plain,hi"), "data:text/plain,hi");
    }
}
