// One protocol for every view the browser answers by itself: the frame player, the explorer, the swapper
// and follow-me. Python's side is app_pages/_support/view.py. pack.py's component_js puts this file first in
// each component's module, so these are plain functions of that module; what the modules share lives in one
// object of the tab, window.__gdnView (tab()), read and written only here and through these functions. It is
// the tab's only global: the keys (assets/common/keys.js) and the room's clicker keep their state in it too.
//
// It owns five things, each in one place:
// 1. The address bar: writeAddress is the only code that changes it (history.replaceState), at every move,
//    so a reload or a copied link reopens what is shown.
// 2. The position handshake: Python numbers every position it sets on purpose (seq, view.py's seq(): a
//    link, a classroom demo, a story button). A mount with a new seq takes Python's position (pythonMoved);
//    any other keeps what the tab shows, which may be ahead of Python's copy.
// 3. Hash-once payloads: a packed payload is sent to a tab once, then by its hash alone (payloadOf).
// 4. The flush before leaving: a moved view tells Python where it is only just before a click or Enter
//    outside every view that may need it (Share, an export, another widget), in that click's own run.
// 5. The typed relay: what goes to Python is a batch of messages {kind, id, ...} (flush), each handled by
//    the Python module that registered its kind (view.py's KINDS).
//
// A view registers itself: {kind, id, root, moved, message(), follow?(params), ready?()}, where root is
// its element (or holds(node) and connected() for a view made of several), message() what Python is told
// of it (merged into {kind, id}), follow(params) moves it to a followed teacher's position.

const PAYLOADS_KEPT = 128;   // payloads a tab keeps; Python counts fewer as sent (payload.py, KEEP)

function tab() {
  return (window.__gdnView ??= {
    views: new Map(),        // "kind:id" -> a registered view
    payloads: new Map(),     // hash -> gz: the payloads this tab was sent, the most recent last
    relay: null,             // (batch) -> void, once the relay is mounted (assets/common/relay.js)
    need: null,              // (hash) -> void: ask Python for every payload again
    pendingNeed: null,       // a hash missed before the relay was mounted: asked for when it is
    sent: 0,                 // batches relayed so far: numbers each one, so the same batch twice is news
    follow: null,            // follow-me: the teacher's position message ({seq, params}) and
    followed: null,          //   the seq of the last one applied
    navigating: null,        //   the address a student's tab is loading (assets/follow/follow.js)
    lead: null,              //   the teacher's reporter (assets/follow/lead.js)
    installed: new Set(),    // what once() installed in this tab (listeners, by name)
    keys: new Map(),         // name -> the key handler registered under it (assets/common/keys.js)
    clicker: null,           // the room's clicker: {doc, send, round} (assets/live/clicker.js)
  });
}

// fn() the first time `name` is asked for in this tab: listeners every module of a kind shares.
function once(name, fn) {
  const t = tab();
  if (t.installed.has(name)) return;
  t.installed.add(name);
  fn();
}

// ---- 1. the address bar ------------------------------------------------------------------------------

// params: {name: value}; a null value leaves the name out (a view at its default keeps links short).
function writeAddress(params) {
  const url = new URL(window.location.href);
  for (const [name, value] of Object.entries(params)) {
    if (value === null || value === undefined) url.searchParams.delete(name);
    else url.searchParams.set(name, String(value));
  }
  if (url.href !== window.location.href) window.history.replaceState(window.history.state, "", url.href);
}

function readAddress() {
  return new URLSearchParams(window.location.search);
}

// ---- 2. the position handshake -----------------------------------------------------------------------

// True when Python set this view's position on purpose since the last mount: take Python's, then.
function pythonMoved(view, seq) {
  if (view.seq === seq) return false;
  view.seq = seq;
  return true;
}

// ---- 3. hash-once payloads -----------------------------------------------------------------------------

// The gz of `hash` (given: kept; missing: looked up), or null when this tab lacks it: then Python is asked,
// through the relay, to send every payload again, and the run that answers mounts the views anew.
function payloadOf(hash, gz) {
  const t = tab();
  const found = gz || t.payloads.get(hash);
  if (!found) {
    if (t.need) t.need(hash);
    else t.pendingNeed = hash;
    return null;
  }
  t.payloads.delete(hash);
  t.payloads.set(hash, found);
  while (t.payloads.size > PAYLOADS_KEPT) t.payloads.delete(t.payloads.keys().next().value);
  return found;
}

// `hash` was mounted again (a view still showing it, a variant sent by hash alone): the most recent now,
// if this tab has it. Python counts every payload of a run's mounts as just sent (payload.py), so the tab's
// order must follow the same mounts, or a payload shown all along could be dropped while Python thinks the
// tab has it (a page revisited later would then blank and ask for everything again).
function keepRecent(hash) {
  const t = tab();
  const found = t.payloads.get(hash);
  if (found === undefined) return;
  t.payloads.delete(hash);
  t.payloads.set(hash, found);
}

// ---- 4 and 5. the flush before leaving, through the typed relay -------------------------------------------

const connected = (view) => (view.connected ? view.connected() : !!view.root?.isConnected);
const holds = (view, node) => (view.holds ? view.holds(node) : !!view.root?.contains(node));
const liveViews = (kind) => [...tab().views.values()].filter((v) => (!kind || v.kind === kind) && connected(v));

function register(view) {
  const t = tab();
  t.views.set(`${view.kind}:${view.id}`, view);
  listen();
  return view;
}

// Called by the relay's mount (assets/common/relay.js): send(batch) and need(hash) reach Python.
function connectRelay(send, need) {
  const t = tab();
  t.relay = send;
  t.need = need;
  if (t.pendingNeed) need(t.pendingNeed);
  t.pendingNeed = null;
}

// Every moved, mounted view's message in one batch {n, messages: [{kind, id, ...}]}. Without a relay the
// views stay moved, and go with the next flush.
function flush() {
  const t = tab();
  if (!t.relay) return;
  const messages = [];
  for (const view of liveViews()) {
    if (!view.moved) continue;
    view.moved = false;
    messages.push({ ...view.message(), kind: view.kind, id: view.id });
  }
  if (messages.length) t.relay({ n: ++t.sent, messages });
}

// What counts as a click or Enter that may run Python.
const CONTROLS = 'button, a, input, select, textarea, label, [role="button"], [role="tab"], [role="slider"], '
  + '[role="option"], [role="spinbutton"], [role="combobox"]';
// A page link is no such click: a relayed message's own run raced the page switch and won (the switch was
// lost, or the address kept the old page). The views keep their positions across pages in the tab, and a
// moved view stays moved: its message goes with the next flush while it is on the page again. Until then
// Python's copy lags the tab, which is why Python's own moves never rely on it (view.py's set_on_purpose).
const PAGE_LINK = '[data-testid="stTopNavLink"], [data-testid="stSidebarNavLink"], [data-testid="stPageLink-NavLink"]';

// Does a press on `node` (or Enter on it, key: true) flush? Outside every view, not a page link, and for a
// press, on a control.
function leaves(node, { key = false } = {}) {
  if (!node || node.closest?.(PAGE_LINK)) return false;
  if (!key && !node.closest?.(CONTROLS)) return false;
  return !liveViews().some((v) => holds(v, node));
}

function listen() {
  once("flush", () => {
    document.addEventListener("pointerdown", (e) => { if (leaves(e.target)) flush(); }, true);
  });
  onKeys("flush", (e) => {
    if (e.key === "Enter" && leaves(document.activeElement, { key: true })) flush();
    return false;                                        // the Enter goes on to what it was pressed on
  });
}

// ---- follow-me: a student's views go where the teacher's went ----------------------------------------------
// The position message, from app_pages/_follow.py (_follower) through assets/follow/follow.js:
//   {seq, params}: seq names the teacher's view (a hash: a new seq is a new position, the same one was
//   applied already); params is the teacher's query {name: value} as writeAddress left it (a view at its
//   default is left out), without the teacher's own settings (lang, mode, join, follow).
// Each live view that can follow (follow(params)) is moved there once per seq; while one of them is still
// unpacking (ready() false), nothing moves: applyFollow runs again when it is ready.

function followTo(message) {
  tab().follow = message;
  applyFollow();
}

function applyFollow() {
  const t = tab();
  const wanted = t.follow;
  if (!wanted || wanted.seq === t.followed) return;
  const views = liveViews().filter((v) => v.follow);
  if (!views.length || views.some((v) => v.ready && !v.ready())) return;   // applied when one mounts
  t.followed = wanted.seq;
  for (const view of views) view.follow(wanted.params);
}
