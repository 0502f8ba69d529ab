//! A Firefox context's cookies and preload scripts, for signing in once: cookies go in and
//! out in the shape DevTools gives them (`Storage.getCookies`), which [`crate::StorageState`]
//! keeps whatever the engine.

use serde_json::{Map, Value, json};

use crate::bidi::Bidi;
use crate::cdp::CdpFail;

use super::fail;

/// The cookies of `user_context`, each as DevTools writes a cookie.
pub(crate) async fn cookies(bidi: &Bidi, user_context: &str) -> Result<Vec<Value>, CdpFail> {
    let partition = json!({ "partition": { "type": "storageKey", "userContext": user_context } });
    let answer = bidi.call("storage.getCookies", partition).await.map_err(fail)?;
    Ok(answer.get("cookies").and_then(Value::as_array).into_iter().flatten().map(devtools_cookie).collect())
}

/// Puts `cookies` (as DevTools writes them) into `user_context`.
pub(crate) async fn set_cookies(bidi: &Bidi, user_context: &str, cookies: &[Value]) -> Result<(), CdpFail> {
    for cookie in cookies {
        let params = json!({
            "cookie": bidi_cookie(cookie),
            "partition": { "type": "storageKey", "userContext": user_context },
        });
        bidi.call("storage.setCookie", params).await.map_err(fail)?;
    }
    Ok(())
}

/// Runs `source` in every document `user_context` loads from now on, before the page's own
/// scripts; the script's id, to remove it.
pub(crate) async fn add_preload(bidi: &Bidi, user_context: &str, source: &str) -> Result<String, CdpFail> {
    let params = json!({ "functionDeclaration": format!("() => {{ {source} }}"), "userContexts": [user_context] });
    let answer = bidi.call("script.addPreloadScript", params).await.map_err(fail)?;
    Ok(answer.get("script").and_then(Value::as_str).unwrap_or_default().to_owned())
}

pub(crate) async fn remove_preload(bidi: &Bidi, script: &str) {
    let _ = bidi.call("script.removePreloadScript", json!({ "script": script })).await;
}

fn devtools_cookie(cookie: &Value) -> Value {
    let mut out = Map::new();
    for field in ["name", "domain", "path", "httpOnly", "secure"] {
        if let Some(value) = cookie.get(field) {
            out.insert(field.to_owned(), value.clone());
        }
    }
    out.insert("value".to_owned(), json!(cookie.pointer("/value/value").and_then(Value::as_str).unwrap_or_default()));
    let same_site = match cookie.get("sameSite").and_then(Value::as_str) {
        Some("strict") => "Strict",
        Some("lax") => "Lax",
        _ => "None",
    };
    out.insert("sameSite".to_owned(), json!(same_site));
    // A session cookie has no expiry; DevTools says -1.
    out.insert("expires".to_owned(), cookie.get("expiry").cloned().unwrap_or(json!(-1)));
    Value::Object(out)
}

fn bidi_cookie(cookie: &Value) -> Value {
    let text = |field: &str| cookie.get(field).and_then(Value::as_str).unwrap_or_default();
    let mut out = json!({
        "name": text("name"),
        "value": { "type": "string", "value": text("value") },
        "domain": text("domain"),
        "path": cookie.get("path").and_then(Value::as_str).unwrap_or("/"),
        "httpOnly": cookie.get("httpOnly").and_then(Value::as_bool).unwrap_or(false),
        "secure": cookie.get("secure").and_then(Value::as_bool).unwrap_or(false),
        "sameSite": text("sameSite").to_ascii_lowercase(),
    });
    if out["sameSite"] == "" {
        out["sameSite"] = json!("none");
    }
    if let Some(expiry) = cookie.get("expires").and_then(Value::as_f64).filter(|at| *at > 0.0) {
        out["expiry"] = json!(expiry as u64);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_goes_out_and_back_in_the_devtools_shape() {
        let firefox = json!({
            "name": "session", "value": { "type": "string", "value": "abc" }, "domain": "127.0.0.1",
            "path": "/", "httpOnly": true, "secure": false, "sameSite": "lax", "size": 10,
        });
        let devtools = devtools_cookie(&firefox);
        assert_eq!(
            devtools,
            json!({ "name": "session", "value": "abc", "domain": "127.0.0.1", "path": "/", "httpOnly": true,
                    "secure": false, "sameSite": "Lax", "expires": -1 })
        );
        let back = bidi_cookie(&devtools);
        assert_eq!(back["value"], json!({ "type": "string", "value": "abc" }));
        assert_eq!((back["sameSite"].as_str(), back.get("expiry")), (Some("lax"), None), "a session cookie stays one");
    }
}
