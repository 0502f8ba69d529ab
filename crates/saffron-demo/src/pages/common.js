"use strict";

// Every API call goes through here, so that a 401 anywhere means the same thing (the session
// is gone: back to sign-in) and a network failure is an ordinary failed result, not a throw.
async function api(method, url, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url, init);
  } catch (_) {
    return { ok: false, status: 0, data: null };
  }
  let data = null;
  try {
    data = await res.json();
  } catch (_) {
    data = null;
  }
  if (res.status === 401) {
    location.assign("/login?expired=1");
  }
  return { ok: res.ok, status: res.status, data };
}

function show(el, text) {
  el.textContent = text;
  el.hidden = false;
}

function hide(el) {
  el.textContent = "";
  el.hidden = true;
}

function plural(n) {
  return n === 1 ? "1 order" : n + " orders";
}

function money(cents) {
  return "€" + (cents / 100).toFixed(2);
}

// Fault "interstitial": the dialog covers the page, so clicks land on it, until accepted.
const consentDialog = document.getElementById("consent");
if (consentDialog) {
  document.getElementById("accept-cookies").addEventListener("click", async () => {
    const r = await api("POST", "/api/consent");
    if (r.ok) {
      consentDialog.remove();
    }
  });
}
