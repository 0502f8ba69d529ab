//! The JavaScript run in the page. Each function is sent whole with each call (V8 caches the
//! compiled source), so nothing is installed in the page and nothing survives a navigation.
//!
//! Everything runs in the page's main world and returns plain JSON (or a DOM node), so the
//! Rust side decides; the scripts only look. The one exception hides secrets for a screenshot:
//! it changes the page for the picture's length, from an isolated world.

/// Containment and focus across open shadow roots, as a person sees the page: an element in a
/// component's shadow tree is inside the component. Part of both preludes below.
macro_rules! shadow_helpers {
    () => {
        r##"
  const within = (outer, node) => {
    for (let n = node; n; n = n.parentNode || n.host) if (n === outer) return true;
    return false;
  };
  const focusedElement = () => {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  };
"##
    };
}

/// Helpers shared by the element functions below (a macro so `concat!` can splice it in).
macro_rules! prelude {
    () => {
        concat!(
            shadow_helpers!(),
            r##"
  const norm = (s) => String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
  const describe = (n) => {
    if (!n || n.nodeType !== 1) return 'nothing';
    let s = '<' + n.localName;
    for (const a of ['id', 'role', 'aria-label', 'data-testid', 'name', 'type', 'class']) {
      const v = n.getAttribute(a);
      if (v) s += ' ' + a + '="' + (v.length > 40 ? v.slice(0, 40) + '…' : v) + '"';
    }
    return s + '>';
  };
  const isDisabled = (e) => {
    if (e.matches(':disabled')) return true;
    const a = e.closest('[aria-disabled]');
    return !!a && a.getAttribute('aria-disabled') === 'true';
  };
  const isVisible = (e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && e.checkVisibility({ visibilityProperty: true });
  };
  const control = (e) => (e.localName === 'label' && e.control ? e.control : e);
"##
        )
    };
}

/// Helpers of the locator functions below: how labels, texts and scope filters read.
macro_rules! locator_helpers {
    () => {
        concat!(
            shadow_helpers!(),
            r##"
  const norm = (s) => String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'TITLE']);
  // A label's own text: what a reader sees as the label, without the options of a select or
  // the content of a textarea nested inside it.
  const labelText = (node) => {
    let out = '';
    for (const child of node.childNodes) {
      if (child.nodeType === 3) out += child.data;
      else if (child.nodeType === 1 && !SKIP.has(child.tagName) && child.tagName !== 'SELECT' && child.tagName !== 'TEXTAREA') out += labelText(child);
    }
    return out;
  };
  // The text of the table cell before a field's own cell, when that cell holds only the field
  // (a legacy form's `<td>Payee</td><td><input></td>`): what names the field to a reader.
  const cellLabel = (el) => {
    const cell = el.closest('td, th');
    if (!cell || cell.querySelectorAll('input, select, textarea').length !== 1) return '';
    let before = cell.previousElementSibling;
    while (before && !norm(before.textContent)) before = before.previousElementSibling;
    if (!before || before.querySelector('input, select, textarea, button')) return '';
    const text = norm(before.textContent);
    return text.length <= 60 ? text.replace(/[:*]\s*$/, '').trim() : '';
  };
  // Ids resolve in the element's own tree: a component's shadow root or the document.
  const labelledBy = (el) => el.getAttribute('aria-labelledby').split(/\s+/)
    .map((id) => el.getRootNode().getElementById(id)).filter(Boolean).map((n) => n.textContent).join(' ');
  // The trees to search from `root`: itself, its own open shadow root and every one inside
  // them, as Playwright's locators pierce them. A selector matches within one tree.
  // (A tree walker: five times as fast as iterating querySelectorAll('*') on a page of 15,000
  // elements, about 1 ms.)
  const trees = (root) => {
    const out = root.shadowRoot ? [root, root.shadowRoot] : [root];
    for (let i = 0; i < out.length; i++) {
      const walker = document.createTreeWalker(out[i], NodeFilter.SHOW_ELEMENT);
      for (let el = walker.nextNode(); el; el = walker.nextNode()) if (el.shadowRoot) out.push(el.shadowRoot);
    }
    return out;
  };
  const selectIn = (searched, selector) => searched.flatMap((tree) => [...tree.querySelectorAll(selector)]);
  const deepAll = (root, selector) => selectIn(trees(root), selector);
  // What a person sees in place of a node's children: a component's shadow tree, a slot's
  // assigned nodes (else its fallback content).
  const shownChildren = (node) => {
    if (node.localName === 'slot') {
      const assigned = node.assignedNodes();
      if (assigned.length) return assigned;
    }
    return (node.shadowRoot || node).childNodes;
  };
  // The text a person sees in an element.
  const composedText = (node) => {
    if (node.nodeType === 3) return node.data;
    if (node.nodeType === 1 && SKIP.has(node.tagName)) return '';
    // A table row's cells read apart, as in `shownText`.
    const apart = node.localName === 'tr' ? ' ' : '';
    let out = '';
    for (const child of shownChildren(node)) out += composedText(child) + apart;
    return out;
  };
  // What the text tier reads: a button-like input shows its value.
  // A table row reads as its cells apart ("04/12/2026 INV-2291 125.50"), as the accessibility
  // tree names it, not run together as its textContent has them when the markup has no
  // whitespace between cells.
  const rowText = (el) => [...el.children].map((cell) => cell.textContent).join(' ');
  const shownText = (el) => el.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type) ? el.value
    : el.localName === 'tr' ? rowText(el) : el.textContent;
  // A scope's filter, `{ text }` (a substring) or `{ source, flags }` (a pattern), on the
  // container's whitespace-collapsed text; none keeps everything. Throws on a bad pattern.
  const textFilter = (filter) => {
    if (!filter) return () => true;
    if (filter.text != null) {
      const want = norm(filter.text);
      return (el) => norm(composedText(el)).includes(want);
    }
    const pattern = new RegExp(filter.source, filter.flags);
    return (el) => pattern.test(norm(composedText(el)));
  };
"##
        )
    };
}

/// `function () => string`: the origin of the element's own document (`null` for an opaque
/// one), which is where anything typed into it goes.
pub(crate) const DOCUMENT_ORIGIN: &str = r##"function () {
  const doc = this.ownerDocument || this;
  try {
    return (doc.defaultView ? doc.defaultView.location.origin : doc.location.origin) || 'null';
  } catch (e) {
    return 'null';
  }
}"##;

/// `function (tier, value, filter) => element | count | error string`: the elements one
/// non-role tier matches, inside `this` when it is an element (a scope's container; the
/// container itself excluded), else in the whole document, kept only when they pass `filter`
/// (a scope's text filter, or null). One element comes back as a node, anything else as a
/// number, so a unique match costs one call.
pub(crate) const FIND: &str = concat!(
    "function (tier, value, filter) {",
    locator_helpers!(),
    r##"
  const root = this && this.nodeType === 1 ? this : document;
  const inside = (el) => root === document || (el !== root && within(root, el));
  let keep;
  try {
    keep = textFilter(filter);
  } catch (e) {
    return 'invalid hasTextRegex: ' + e.message;
  }
  let found = [];
  if (tier === 'label') {
    const want = norm(value);
    const set = new Set();
    // One walk for the three searches (labels may stand outside a scope's container).
    const searched = trees(root);
    for (const label of selectIn(root === document ? searched : trees(document), 'label')) {
      if (label.control && inside(label.control) && norm(labelText(label)) === want) set.add(label.control);
    }
    for (const el of selectIn(searched, '[aria-label]')) {
      if (norm(el.getAttribute('aria-label')) === want) set.add(el);
    }
    for (const el of selectIn(searched, '[aria-labelledby]')) {
      if (norm(labelledBy(el)) === want) set.add(el);
    }
    found = [...set];
  } else if (tier === 'placeholder') {
    const want = norm(value);
    found = deepAll(root, '[placeholder]').filter((el) => norm(el.getAttribute('placeholder')) === want);
  } else if (tier === 'testId') {
    found = deepAll(root, '[data-testid]').filter((el) => el.getAttribute('data-testid') === value);
  } else if (tier === 'text') {
    const want = norm(value);
    const matches = [];
    const base = root === document ? document.body : root;
    for (const el of base ? deepAll(base, '*') : []) {
      if (SKIP.has(el.tagName)) continue;
      const raw = shownText(el);
      // Normalizing never lengthens a string, so a shorter raw text cannot match.
      if (raw.length >= want.length && norm(raw) === want) matches.push(el);
    }
    // The innermost element holding the text, not every ancestor that contains it too.
    found = matches.filter((m) => !matches.some((o) => o !== m && m.contains(o)));
  } else if (tier === 'css') {
    try {
      found = deepAll(root, value);
    } catch (e) {
      return 'invalid CSS selector: ' + e.message;
    }
  }
  found = found.filter(keep);
  return found.length === 1 ? found[0] : found.length;
}"##
);

/// `function (filter, ...elements) => element | count | error string`: the elements (found by
/// the role tier) that pass a scope's text filter; the one left as a node, else how many.
pub(crate) const FILTER: &str = concat!(
    "function (filter, ...elements) {",
    locator_helpers!(),
    r##"
  let keep;
  try {
    keep = textFilter(filter);
  } catch (e) {
    return 'invalid hasTextRegex: ' + e.message;
  }
  const found = elements.filter(keep);
  return found.length === 1 ? found[0] : found.length;
}"##
);

/// `function (want, filter, root)` on a found element: compares the signals a recording holds
/// (`want`: label, placeholder, testId, text, and `css` as `[index, selector]` pairs) with the
/// element as it is now. Each comes back as `{ same, now }`: `now` is the current value (null
/// when the element has none), or for a CSS fallback what it selects now, searched from
/// `root` (the scope's container, or the document) and through `filter`, as the locator does.
pub(crate) const SIGNALS: &str = concat!(
    "function (want, filter, root) {",
    locator_helpers!(),
    r##"
  const el = this;
  const base = root || document;
  const short = (s) => (s.length > 80 ? s.slice(0, 80) + '…' : s);
  const out = {};
  if (want.label != null) {
    const labels = [...(el.labels || [])].map(labelText);
    if (el.hasAttribute('aria-label')) labels.push(el.getAttribute('aria-label'));
    if (el.hasAttribute('aria-labelledby')) labels.push(labelledBy(el));
    const texts = labels.map(norm);
    out.label = { same: texts.includes(norm(want.label)), now: texts.length ? texts[0] : null };
  }
  if (want.placeholder != null) {
    const now = el.getAttribute('placeholder');
    out.placeholder = { same: now != null && norm(now) === norm(want.placeholder), now };
  }
  if (want.testId != null) {
    const now = el.getAttribute('data-testid');
    out.testId = { same: now === want.testId, now };
  }
  if (want.text != null) {
    const now = norm(shownText(el));
    out.text = { same: now === norm(want.text), now: short(now) };
  }
  if (want.css) {
    let keep;
    try {
      keep = textFilter(filter);
    } catch (e) {
      keep = () => true;
    }
    const searched = trees(base);
    out.css = want.css.map(([index, selector]) => {
      let all;
      try {
        all = selectIn(searched, selector).filter(keep);
      } catch (e) {
        return { index, same: false, now: 'is not a valid selector' };
      }
      if (all.length === 1 && all[0] === el) return { index, same: true, now: null };
      const others = all.filter((o) => o !== el).length;
      const now = all.length === 0 ? 'selects no element'
        : all.includes(el) ? 'selects it and ' + others + (others === 1 ? ' other' : ' others')
        : others === 1 ? 'selects another element' : 'selects ' + others + ' other elements';
      return { index, same: false, now };
    });
  }
  return out;
}"##
);

/// `async function (checks)` on an element: Playwright's actionability checks, in its order,
/// then (for fill) focus and select the content. Returns `{ ok, x, y, done }` with the point to
/// click in viewport CSS pixels, or `{ ok: false, reason, fatal }`.
pub(crate) const ACTIONABLE: &str = concat!(
    "async function (checks) {",
    prelude!(),
    r##"
  const el = this;
  if (!el.isConnected) return { ok: false, reason: 'the element was detached from the page' };
  if (el.nodeType !== 1) return { ok: false, fatal: true, reason: 'the target is not an element' };
  // A background tab renders nothing: no animation frames, input held back.
  if (document.visibilityState !== 'visible') return { ok: false, background: true, reason: 'the tab is in the background' };
  if (checks.visible && !isVisible(el)) return { ok: false, reason: 'the element is not visible' };
  if (checks.enabled && isDisabled(el)) return { ok: false, reason: 'the element is disabled' };
  if (checks.editable) {
    const tag = el.localName;
    const field = tag === 'textarea' || el.isContentEditable ||
      (tag === 'input' && !['checkbox', 'radio', 'file', 'submit', 'button', 'reset', 'image', 'hidden'].includes(el.type));
    if (!field) return { ok: false, fatal: true, reason: describe(el) + ' is not a text field' };
    if (el.readOnly || el.getAttribute('aria-readonly') === 'true') return { ok: false, reason: 'the field is read-only' };
  }
  if (checks.scroll) {
    const r = el.getBoundingClientRect();
    if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    }
  }
  if (checks.stable) {
    // The same box in two consecutive frames, as Playwright requires. The box read now is the
    // one the last frame rendered (animations advance only when a frame starts; a change made
    // since then moves it now already), so one frame later is the next frame's box. The timer
    // is a floor for pages that do not render (a background tab gets no frames), so the check
    // cannot hang.
    const frame = () => new Promise((resolve) => { requestAnimationFrame(() => resolve()); setTimeout(resolve, 100); });
    const a = el.getBoundingClientRect();
    await frame();
    const b = el.getBoundingClientRect();
    if (a.x !== b.x || a.y !== b.y || a.width !== b.width || a.height !== b.height) {
      return { ok: false, reason: 'the element is moving (not stable)' };
    }
  }
  const r = el.getBoundingClientRect();
  const box = { x: r.left, y: r.top, width: r.width, height: r.height };
  const left = Math.max(r.left, 0), top = Math.max(r.top, 0);
  const right = Math.min(r.right, innerWidth), bottom = Math.min(r.bottom, innerHeight);
  const x = (left + right) / 2, y = (top + bottom) / 2;
  if (checks.hit) {
    if (right <= left || bottom <= top) return { ok: false, reason: 'the element is outside the viewport' };
    // What is hit, in each tree from the document down to the element's own, as Playwright
    // looks: while the topmost element of a tree is the host of the next tree on the way, look
    // in that tree. (A shadow root's elementFromPoint answers its host for slotted content,
    // such as the text of a component's button.)
    const roots = [];
    for (let root = el.getRootNode(); ; root = root.host.getRootNode()) {
      roots.push(root);
      if (!root.host) break;
    }
    let hit = null;
    for (let i = roots.length - 1; i >= 0; i--) {
      const inner = roots[i].elementsFromPoint(x, y)[0];
      if (!inner) break;
      hit = inner;
      if (i > 0 && inner !== roots[i - 1].host) break;
    }
    if (!hit) return { ok: false, reason: 'nothing receives pointer events at the element\'s centre' };
    // A click on a control's label reaches the control: the browser forwards it (unless it
    // lands on a link or another control inside the label). Components often draw their own
    // box over a hidden native checkbox, inside its label.
    const label = hit.closest('label');
    const own = hit.closest('a[href], button, input, select, textarea, [contenteditable]');
    const forwarded = !!label && label.control === el && !(own && own !== el && label.contains(own));
    if (hit !== el && !within(el, hit) && !forwarded) {
      // Name what is in the way, and the dialog or landmark it belongs to, so a report says
      // "the cookie dialog covers the button" rather than "a div".
      const dialog = hit.closest('dialog, [role="dialog"], [role="alertdialog"], [aria-modal="true"]');
      const named = dialog || hit.closest('[aria-label], [role], [id]');
      let who = describe(hit);
      if (named && named !== hit && !within(named, el)) who += ' inside ' + describe(named);
      return { ok: false, reason: who + ' intercepts pointer events' };
    }
  }
  if (checks.fill != null) {
    const value = checks.fill;
    if (el.localName === 'input' && ['color', 'date', 'time', 'datetime-local', 'month', 'range', 'week'].includes(el.type)) {
      // Nothing can be typed into these (their pickers are the browser's own widgets), so the
      // value is set and the events a pick fires are dispatched here, as Playwright does.
      el.focus();
      el.value = value;
      if (el.value !== value) return { ok: false, fatal: true, reason: 'the ' + el.type + ' field does not accept "' + value + '"' };
      el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return { ok: true, done: true, x, y, box };
    }
    el.focus();
    if (el.localName === 'input' || el.localName === 'textarea') {
      el.select();
    } else {
      const range = document.createRange();
      range.selectNodeContents(el);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }
    const focused = focusedElement();
    if (focused !== el && !within(el, focused)) {
      return { ok: false, reason: 'the field did not take focus' };
    }
    return { ok: true, done: false, x, y, box };
  }
  return { ok: true, x, y, box };
}"##
);

/// `function (x, y, hit)` on an iframe element: the point (`x`, `y`) of the frame's viewport in
/// the viewport of the iframe's own document, `{ ok, x, y }`, or `{ ok: false, reason }` when
/// that point is outside this viewport, or (`hit`) something else is on top of the frame there.
/// The frame's content box starts inside its border and padding.
pub(crate) const FRAME_POINT: &str = concat!(
    "function (x, y, hit) {",
    prelude!(),
    r##"
  const frame = this;
  if (!frame.isConnected) return { ok: false, reason: 'the frame was detached from the page' };
  const r = frame.getBoundingClientRect();
  const style = getComputedStyle(frame);
  const px = r.left + frame.clientLeft + parseFloat(style.paddingLeft) + x;
  const py = r.top + frame.clientTop + parseFloat(style.paddingTop) + y;
  if (px < 0 || py < 0 || px >= innerWidth || py >= innerHeight) {
    return { ok: false, reason: 'the element is outside the viewport (its frame is scrolled out of view)' };
  }
  if (hit) {
    const top = frame.getRootNode().elementFromPoint(px, py);
    if (top !== frame) return { ok: false, reason: describe(top) + ' intercepts pointer events (it covers the frame ' + describe(frame) + ')' };
  }
  return { ok: true, x: px, y: py };
}"##
);

/// `function (values)` on a `<select>`: focus it and choose options by value or label, firing
/// `input` and `change` as a selection made in the browser's own popup does. No input event
/// can pick an option in that popup, so these two are dispatched by the script.
pub(crate) const SELECT: &str = concat!(
    "function (values) {",
    prelude!(),
    r##"
  const el = this;
  if (!el.isConnected) return { ok: false, reason: 'the element was detached from the page' };
  if (el.localName !== 'select') return { ok: false, fatal: true, reason: describe(el) + ' is not a <select>' };
  if (!isVisible(el)) return { ok: false, reason: 'the element is not visible' };
  if (isDisabled(el)) return { ok: false, reason: 'the element is disabled' };
  const options = [...el.options];
  const chosen = [];
  for (const v of values) {
    const o = options.find((o) => o.value === v) || options.find((o) => o.label === v || norm(o.textContent) === norm(v));
    // Options may still be loading: not fatal, the caller retries until its timeout.
    if (!o) return { ok: false, reason: 'no option "' + v + '" (options: ' + options.map((o) => '"' + o.label + '"').join(', ') + ')' };
    if (o.disabled) return { ok: false, reason: 'option "' + v + '" is disabled' };
    chosen.push(o);
  }
  if (chosen.length > 1 && !el.multiple) return { ok: false, fatal: true, reason: 'the <select> takes one option, ' + chosen.length + ' were given' };
  // A person opens the select first, which moves the focus to it (and commits the field
  // they leave), then picks. Picking what is already chosen changes nothing and fires nothing.
  el.focus();
  const before = options.map((o) => o.selected);
  for (const o of options) o.selected = chosen.includes(o);
  if (!chosen.length) el.selectedIndex = -1;
  if (options.some((o, i) => o.selected !== before[i])) {
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }
  return { ok: true };
}"##
);

/// `function (count)` on an upload's target: the file input it is (or labels), checked to take
/// `count` files, as a DOM node; otherwise, as JSON text (a node is not returned by value, and
/// an object not by value would come back as a handle), `{ chooser: true }` for another element,
/// which a person would click to open a file chooser, or `{ ok: false, reason }`.
pub(crate) const FILE_INPUT: &str = concat!(
    "function (count) {",
    prelude!(),
    r##"
  if (!this.isConnected) return JSON.stringify({ ok: false, reason: 'the element was detached from the page' });
  const el = control(this);
  if (el.localName !== 'input' || el.type !== 'file') {
    if (el.localName === 'input' || el.localName === 'select' || el.localName === 'textarea') {
      return JSON.stringify({ ok: false, fatal: true, reason: describe(el) + ' is not a file input' });
    }
    return JSON.stringify({ chooser: true });
  }
  // A file input is often hidden behind a styled label or button: a person still picks files
  // for it, so only a disabled one is refused (Playwright's setInputFiles does the same).
  if (isDisabled(el)) return JSON.stringify({ ok: false, reason: 'the file input is disabled' });
  if (count > 1 && !el.multiple) {
    const reason = 'the file input takes one file (no multiple attribute), ' + count + ' were given';
    return JSON.stringify({ ok: false, fatal: true, reason });
  }
  return el;
}"##
);

/// `function (files)` on a file input: its files become `files` (`{ name, mimeType,
/// lastModified, base64 }`), then `input` and `change` as a choice in the file chooser fires.
/// For a browser on another machine, which cannot read the files where Saffron runs.
pub(crate) const SET_FILES: &str = r##"function (files) {
  const transfer = new DataTransfer();
  for (const f of files) {
    const binary = atob(f.base64);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    transfer.items.add(new File([bytes], f.name, { type: f.mimeType, lastModified: f.lastModified }));
  }
  this.files = transfer.files;
  this.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return { ok: true };
}"##;

/// Focus the element (`press` on a target types into it).
pub(crate) const FOCUS: &str = r##"function () {
  if (!this.isConnected) return { ok: false, reason: 'the element was detached from the page' };
  this.focus();
  return { ok: true };
}"##;

/// Focuses a text field with the caret after its content, where a person who clicks past the
/// end of the text types. `{ ok }`, or `{ ok: false, reason }`.
pub(crate) const FOCUS_AT_END: &str = r##"function () {
  if (!this.isConnected) return { ok: false, reason: 'the element was detached from the page' };
  this.focus();
  if (this.localName === 'input' || this.localName === 'textarea') {
    const end = this.value.length;
    // Some input types (email, number) have no selection to set.
    try { this.setSelectionRange(end, end); } catch (_) {}
  } else if (this.isContentEditable) {
    const range = document.createRange();
    range.selectNodeContents(this);
    range.collapse(false);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  const focused = this.getRootNode().activeElement;
  if (focused !== this && !this.contains(focused)) return { ok: false, reason: 'the field did not take focus' };
  return { ok: true };
}"##;

/// `{ checked, radio }` of a checkbox or radio (native or ARIA), or `{ error }`.
pub(crate) const CHECKED: &str = concat!(
    "function () {",
    prelude!(),
    r##"
  const el = control(this);
  if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio')) return { checked: el.checked, radio: el.type === 'radio' };
  const role = el.getAttribute('role');
  if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role)) {
    return { checked: el.getAttribute('aria-checked') === 'true', radio: role === 'radio' || role === 'menuitemradio' };
  }
  return { error: describe(el) + ' is not a checkbox or radio' };
}"##
);

/// Whether the element is visible (attached, non-empty box, not `visibility: hidden`).
pub(crate) const VISIBLE: &str = concat!("function () {", prelude!(), "return this.isConnected && isVisible(this); }");

/// The element's rendered text (`innerText`), or `null` when it is detached.
pub(crate) const TEXT: &str = r##"function () {
  if (!this.isConnected) return null;
  return this.innerText ?? this.textContent ?? '';
}"##;

/// `{ value }` of a form field, or `{ error }`.
pub(crate) const VALUE: &str = concat!(
    "function () {",
    prelude!(),
    r##"
  const el = control(this);
  if (['input', 'textarea', 'select'].includes(el.localName)) return { value: el.value };
  return { error: describe(el) + ' is not a form field' };
}"##
);

/// `function (state)` with an `ElementState` as JSON: `{ pass, found }`.
pub(crate) const STATE: &str = concat!(
    "function (state) {",
    prelude!(),
    r##"
  const el = this;
  switch (state.kind) {
    case 'class':
      return { pass: el.classList.contains(state.token), found: 'class="' + (el.getAttribute('class') || '') + '"' };
    case 'attribute': {
      const has = el.hasAttribute(state.name);
      const v = el.getAttribute(state.name);
      return { pass: has && (state.value == null || v === state.value), found: has ? state.name + '="' + v + '"' : 'no attribute ' + state.name };
    }
    case 'css': {
      const v = getComputedStyle(el).getPropertyValue(state.property).trim();
      return { pass: v === String(state.value).trim(), found: state.property + ': ' + v };
    }
    case 'checked':
    case 'unchecked': {
      const t = control(el);
      const c = t.localName === 'input' && (t.type === 'checkbox' || t.type === 'radio') ? t.checked : t.getAttribute('aria-checked') === 'true';
      return { pass: state.kind === 'checked' ? c : !c, found: c ? 'checked' : 'unchecked' };
    }
    case 'disabled':
    case 'enabled': {
      const d = isDisabled(control(el));
      return { pass: state.kind === 'disabled' ? d : !d, found: d ? 'disabled' : 'enabled' };
    }
    case 'focused': {
      const a = focusedElement();
      return { pass: a === el || a === control(el), found: a && a !== document.body ? describe(a) + ' has focus' : 'nothing has focus' };
    }
  }
  return { pass: false, found: 'unknown state ' + state.kind };
}"##
);

/// `(secrets) => count`: blanks, for a screenshot, every form field whose value holds one of
/// `secrets` (each secret in every spelling a page may show it in), makes transparent every
/// element whose own text does, and covers with a box (as Playwright's screenshot `mask` does)
/// the innermost element whose text across its children holds one (a value the page split
/// over two elements), in this document and its open shadow roots. What it changed is kept on
/// the isolated world's global (invisible to the page) for [`RESTORE_SECRETS`]. Run in an isolated world, so a page
/// that patched `String.prototype.includes` or the value setter never sees the secrets.
pub(crate) const HIDE_SECRETS: &str = r##"(secrets) => {
  const holds = (text) => typeof text === 'string' && secrets.some((s) => text.includes(s));
  const squeeze = (text) => text.replace(/\s+/g, '');
  const squeezed = secrets.map(squeeze).filter((s) => s.length >= 3);
  // Pieces on separate lines or in separate blocks read as one once white space is dropped.
  const spread = (text) => typeof text === 'string' && (holds(text) || squeezed.some((s) => squeeze(text).includes(s)));
  const hidden = [];
  const cover = (element) => {
    const box = element.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) return;
    const mask = document.createElement('div');
    mask.style.cssText = 'position:fixed;pointer-events:none;z-index:2147483647;background:#ff00ff;margin:0;border:0;'
      + 'left:' + box.left + 'px;top:' + box.top + 'px;width:' + box.width + 'px;height:' + box.height + 'px;';
    document.documentElement.appendChild(mask);
    hidden.push({ element: mask, kind: 'box' });
  };
  const hideText = (element) => {
    if (hidden.some((h) => h.element === element && h.kind === 'style')) return;
    hidden.push({ element, kind: 'style', style: element.getAttribute('style') });
    element.style.setProperty('color', 'transparent', 'important');
    element.style.setProperty('text-shadow', 'none', 'important');
    element.style.setProperty('-webkit-text-fill-color', 'transparent', 'important');
  };
  const visit = (root) => {
    for (const field of root.querySelectorAll('input, textarea')) {
      if (holds(field.value)) {
        let selection = null;
        try { selection = [field.selectionStart, field.selectionEnd]; } catch (e) { /* no selection API */ }
        hidden.push({ element: field, kind: 'value', value: field.value, selection });
        field.value = '';
      }
    }
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (holds(node.data) && node.parentElement) hideText(node.parentElement);
    }
    const elements = [...root.querySelectorAll('*')];
    // Text split over elements: the innermost element whose whole text holds a secret.
    const holding = elements.filter((el) => spread(el.textContent));
    for (const el of holding) {
      if (!holding.some((other) => other !== el && el.contains(other))) cover(el);
    }
    // Frames are not entered: each frame's document gets its own call, in its own realm.
    for (const element of elements) {
      if (element.shadowRoot) visit(element.shadowRoot);
    }
  };
  if (document.documentElement) visit(document.documentElement);
  globalThis.__saffronHidden = hidden;
  return hidden.length;
}"##;

/// `() => count`: puts back what [`HIDE_SECRETS`] changed, last change first.
pub(crate) const RESTORE_SECRETS: &str = r##"() => {
  const hidden = globalThis.__saffronHidden || [];
  for (const h of hidden.slice().reverse()) {
    if (h.kind === 'box') {
      h.element.remove();
    } else if (h.kind === 'value') {
      h.element.value = h.value;
      if (h.selection) { try { h.element.setSelectionRange(h.selection[0], h.selection[1]); } catch (e) { /* none */ } }
    } else if (h.style === null) {
      h.element.removeAttribute('style');
    } else {
      h.element.setAttribute('style', h.style);
    }
  }
  globalThis.__saffronHidden = [];
  return hidden.length;
}"##;

/// `function ()` on an element: what the selector ladder can identify it by, read as the
/// locator tiers of [`FIND`] read them. `{ detached }` when it left the document; else its
/// tag, label, placeholder, test id, shown text, id, stable attributes, a structural CSS path,
/// and the nearest row-like container (`role`, and the short texts that may single it out).
pub(crate) const LADDER_FACTS: &str = concat!(
    "function () {",
    locator_helpers!(),
    r##"
  const el = this;
  if (!el || el.nodeType !== 1 || !el.isConnected) return { detached: true };
  const attr = (name) => el.getAttribute(name);
  const labels = [...(el.labels || [])].map((l) => norm(labelText(l))).filter(Boolean);
  if (el.hasAttribute('aria-label')) labels.push(norm(attr('aria-label')));
  if (el.hasAttribute('aria-labelledby')) labels.push(norm(labelledBy(el)));
  const text = norm(shownText(el));
  // Stable attributes, sturdiest first, each a list of alternatives (the first that is unique
  // is kept): the name, else the type with the name; a link's target.
  const tag = CSS.escape(el.localName);
  const quoted = (name) => '[' + name + '="' + CSS.escape(attr(name)) + '"]';
  const attributeCss = [];
  // An empty name (a component reflecting an unset property) names nothing.
  if (attr('name')) {
    const byName = [tag + quoted('name')];
    if (el.hasAttribute('type')) byName.push(tag + quoted('type') + quoted('name'));
    attributeCss.push(byName);
  }
  if (el.localName === 'a' && el.hasAttribute('href')) attributeCss.push([tag + quoted('href')]);
  // Each class with the selector it makes (`button.clear-completed`): the Rust side keeps
  // those that look written by a person.
  const classCss = [...el.classList].map((c) => [c, tag + '.' + CSS.escape(c)]);
  // A frame is best known by its title, which is also what assistive technology announces.
  if ((el.localName === 'iframe' || el.localName === 'frame') && attr('title')) {
    attributeCss.unshift([tag + '[title="' + attr('title').replace(/["\\]/g, '\\$&') + '"]']);
  }
  // A structural path: each step the tag, narrowed by its position among same-tag siblings.
  const steps = [];
  for (let n = el; n && n.nodeType === 1 && n !== document.documentElement; n = n.parentElement) {
    let step = CSS.escape(n.localName);
    const parent = n.parentElement;
    if (parent) {
      const same = [...parent.children].filter((c) => c.localName === n.localName);
      if (same.length > 1) step += ':nth-of-type(' + (same.indexOf(n) + 1) + ')';
    }
    steps.unshift(step);
  }
  const ROWS = { li: 'listitem', tr: 'row', article: 'article' };
  const ROW_ROLES = ['listitem', 'row', 'article', 'option', 'treeitem', 'gridcell', 'cell'];
  let row = null;
  // Up through the component that holds the element, when it is in a shadow root.
  const parentOf = (n) => n.parentElement || (n.parentNode && n.parentNode.host) || null;
  // A row's text nodes as a person reads them.
  const textNodes = (node, out) => {
    if (node.nodeType === 3) out.push(node);
    else for (const child of shownChildren(node)) textNodes(child, out);
    return out;
  };
  // A row's texts, in document order, those inside `skip` left out.
  const rowTexts = (n, skip) => {
    const texts = [];
    for (const t of textNodes(n, [])) {
      if ((skip && within(skip, t)) || SKIP.has(t.parentElement && t.parentElement.tagName)) continue;
      const whole = norm(t.data);
      if (!whole) continue;
      // The first words before a separator often name the row alone ("Order 1002").
      const head = norm(whole.split(/\s[·•|–—-]\s|,\s|:\s/)[0]);
      for (const candidate of [head, whole]) {
        if (candidate && candidate.length <= 60 && !texts.includes(candidate)) texts.push(candidate);
      }
    }
    return texts;
  };
  const ownRole = el.getAttribute('role') || ROWS[el.localName];
  // The element is a row itself (a list item, a table row): its own texts can single it out.
  const ownRow = ownRole && ROW_ROLES.includes(ownRole) ? { role: ownRole, texts: rowTexts(el, null) } : null;
  for (let n = parentOf(el); n && n !== document.body; n = parentOf(n)) {
    const role = n.getAttribute('role') || ROWS[n.localName];
    if (role && ROW_ROLES.includes(role)) {
      const texts = rowTexts(n, el);
      // In document order: a row usually starts with what identifies it (`#1002`, `Order 1002`),
      // and a later text (a price, a status) is more likely to change. A row-like container
      // without text of its own (a grid cell holding only the checkbox) cannot single itself
      // out: the next one up may.
      if (texts.length) {
        row = { role, texts };
        break;
      }
    }
  }
  return {
    tag: el.localName,
    labels: labels.filter(Boolean),
    placeholder: attr('placeholder'),
    testId: attr('data-testid'),
    text: text.length > 0 && text.length <= 80 ? text : null,
    id: el.id || null,
    idCss: el.id ? '#' + CSS.escape(el.id) : null,
    attributeCss: attributeCss,
    classCss,
    rowText: el.localName === 'tr' ? norm(rowText(el)) : null,
    path: steps.join(' > '),
    row,
    ownRow,
    cellLabel: labels.length || norm(attr('placeholder') || '') ? null : (cellLabel(el) || null),
  };
}"##
);

/// `() => element[]`: the fields the accessibility tree does not show as they are: password
/// fields, and fields whose insides are the browser's own widget (date, time, month, week,
/// colour), which it shows only as their parts.
pub(crate) const SPECIAL_FIELDS: &str = concat!(
    "() => {",
    locator_helpers!(),
    r##"
  const fields = deepAll(document, 'input[type=password], input[type=date], input[type=time], input[type=datetime-local], input[type=month], input[type=week], input[type=color], input[type=file]');
  // A styled file picker hides its input: the label is what a person clicks.
  const hidden = (e) => !e.checkVisibility({ visibilityProperty: true, opacityProperty: true });
  const pickers = deepAll(document, 'label').filter((l) => {
    const c = l.control;
    return c && c.localName === 'input' && c.type === 'file' && hidden(c) && !hidden(l);
  });
  // What the page lets one drag with the browser's drag and drop (links and images are
  // draggable by default, and are no news).
  const draggable = deepAll(document, '[draggable=true]').filter((e) => !hidden(e));
  // A field a legacy form names only by the table cell beside it: no label, no ARIA, no
  // placeholder or title, so the accessibility tree gives it no name.
  const nameless = deepAll(document, 'input, select, textarea').filter((e) =>
    !['hidden', 'password', 'submit', 'button', 'reset', 'image', 'file'].includes(e.type) &&
    !hidden(e) && !(e.labels && e.labels.length) && !e.hasAttribute('aria-label') &&
    !e.hasAttribute('aria-labelledby') && !norm(e.getAttribute('placeholder') || '') &&
    !norm(e.getAttribute('title') || '') && cellLabel(e));
  return fields.concat(pickers, draggable, nameless);
}"##
);

/// `function ()` on the array [`SPECIAL_FIELDS`] returned: each field's kind, label and value
/// (never a password field's value: only whether it has one); for a file input whether it takes
/// several files, and for the label of a hidden one its text.
pub(crate) const SPECIAL_FIELD_FACTS: &str = concat!(
    "function () {",
    locator_helpers!(),
    r##"
  return this.map((el) => {
    if (el.type === 'password') return { password: true, filled: el.value !== '' };
    if (el.type === 'file') return { file: true, multiple: el.multiple };
    if (el.getAttribute('draggable') === 'true') return { draggable: true };
    if (el.localName === 'label') return { picker: true, label: norm(labelText(el)), multiple: el.control.multiple, disabled: el.control.disabled };
    if (!['date', 'time', 'datetime-local', 'month', 'week', 'color'].includes(el.type) && cellLabel(el)) {
      return { inferred: true, label: cellLabel(el) };
    }
    const labels = [...(el.labels || [])].map(labelText);
    if (el.hasAttribute('aria-label')) labels.unshift(el.getAttribute('aria-label'));
    if (el.hasAttribute('aria-labelledby')) labels.unshift(labelledBy(el));
    return { label: norm(labels.find((l) => norm(l)) || ''), value: el.value, disabled: el.disabled };
  });
}"##
);

/// `async function (limitMs) => boolean`, in a frame's isolated world: resolves once the
/// frame's document has loaded and nothing in it changed for two animation frames in a row,
/// the rule replay's actionability check applies to an element's box (true), or when `limitMs`
/// ran out first (false: a page that never stops changing, a ticking clock, still gets its
/// snapshot). The timer stands in for frames a page that renders nothing never gets.
pub(crate) const SETTLE: &str = r##"async function (limitMs) {
  const deadline = performance.now() + limitMs;
  const frame = () => new Promise((resolve) => { requestAnimationFrame(() => resolve()); setTimeout(resolve, 100); });
  let changed = false;
  const observer = new MutationObserver(() => { changed = true; });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  let quiet = 0;
  try {
    while (performance.now() < deadline) {
      changed = false;
      await frame();
      quiet = !changed && document.readyState !== 'loading' ? quiet + 1 : 0;
      if (quiet >= 2) return true;
    }
    return false;
  } finally {
    observer.disconnect();
  }
}"##;

/// `function (el) => boolean` on the element a handler's detector finds: whether `el` is inside
/// the interruption that element belongs to, through shadow roots. The interruption is the
/// detector's nearest ancestor that overlays the page (a dialog, an `aria-modal` element, a
/// `<dialog>`, a fixed or sticky layer): a consent dialog detected by its "Accept" button holds
/// its "Manage" and "Save" buttons too, and the page behind it holds none of them. A detector in
/// no overlay is on a page that is the interruption (a sign-in page, a notice page): its
/// document, and nothing in another frame.
pub(crate) const INSIDE_INTERRUPTION: &str = r##"function (el) {
  const up = (n) => n.parentElement || (n.parentNode && n.parentNode.host) || null;
  let root = this.ownerDocument;
  for (let n = this; n && n.nodeType === 1; n = up(n)) {
    const role = n.getAttribute('role');
    const position = getComputedStyle(n).position;
    if (role === 'dialog' || role === 'alertdialog' || n.getAttribute('aria-modal') === 'true' ||
        n.localName === 'dialog' || position === 'fixed' || position === 'sticky') {
      root = n;
      break;
    }
  }
  for (let n = el; n; n = n.parentNode || n.host) if (n === root) return true;
  return false;
}"##;

/// The accessible names of the elements given as arguments, as far as a page script can tell
/// them (aria-labelledby, aria-label, labels, a button's value, alt, text, title, placeholder).
/// Firefox's accessibility tree answers "which elements have this role and name" but not "what
/// is this element's name": this approximation serves only there, to compare names as a person
/// reads them and to name the nearest ones in a failure.
pub(crate) const NAME_GUESS: &str = r##"function (...elements) {
  const clean = (text) => (text || '').replace(/\s+/g, ' ').trim();
  const byIds = (el, ids) => ids.split(/\s+/).map((id) => el.ownerDocument.getElementById(id))
    .filter(Boolean).map((node) => node.textContent).join(' ');
  return elements.map((el) => {
    const labelledBy = el.getAttribute('aria-labelledby');
    if (labelledBy) { const text = clean(byIds(el, labelledBy)); if (text) return text; }
    const aria = clean(el.getAttribute('aria-label'));
    if (aria) return aria;
    if (el.labels && el.labels.length) return clean([...el.labels].map((label) => label.textContent).join(' '));
    if (el.tagName === 'INPUT' && ['button', 'submit', 'reset'].includes(el.type)) return clean(el.value);
    const alt = el.getAttribute('alt');
    if (alt) return clean(alt);
    if (!['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName)) {
      const text = clean(el.innerText ?? el.textContent);
      if (text) return text;
    }
    return clean(el.getAttribute('title') || el.getAttribute('placeholder'));
  });
}"##;

/// The element's role as far as a page script can tell it: its `role` attribute, else the
/// implicit role of its tag for the common cases. Serves only where Firefox's accessibility
/// tree does not tell (see [`NAME_GUESS`]).
pub(crate) const ROLE_GUESS: &str = r##"function () {
  const explicit = (this.getAttribute('role') || '').trim().split(/\s+/)[0];
  if (explicit) return explicit;
  const tag = this.tagName.toLowerCase();
  const type = (this.getAttribute('type') || 'text').toLowerCase();
  if (tag === 'input') {
    return { checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button', reset: 'button',
      image: 'button', number: 'spinbutton', range: 'slider', search: 'searchbox' }[type] || 'textbox';
  }
  if (/^h[1-6]$/.test(tag)) return 'heading';
  return { a: this.hasAttribute('href') ? 'link' : 'generic', button: 'button', textarea: 'textbox',
    select: this.multiple || this.size > 1 ? 'listbox' : 'combobox', img: 'img', nav: 'navigation',
    main: 'main', ul: 'list', ol: 'list', li: 'listitem', table: 'table', tr: 'row', td: 'cell',
    th: 'columnheader', form: 'form', dialog: 'dialog', option: 'option' }[tag] || 'generic';
}"##;
