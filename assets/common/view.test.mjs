// assets/common/view.js: the address bar's rules, the handshake, payloads sent once, the flush before a
// click outside (never a page link) and its typed batch, and follow-me's position message.
import test from "node:test";
import assert from "node:assert/strict";

import { component, fakeTab } from "./fake_tab.mjs";

const NAMES = ["tab", "writeAddress", "readAddress", "pythonMoved", "payloadOf", "keepRecent", "register", "connectRelay",
               "flush", "leaves", "followTo", "applyFollow", "once", "PAYLOADS_KEPT"];
const fresh = () => component(null, { expose: NAMES });

test("the address: set, left out when null, other names and the history state kept, written only on change", async () => {
  const tab = fakeTab("http://app.test/memory_table?lang=zh&memory_t=2");
  const v = await fresh();
  v.writeAddress({ memory_t: 5, memory_stage: "write" });
  assert.equal(window.location.href, "http://app.test/memory_table?lang=zh&memory_t=5&memory_stage=write");
  v.writeAddress({ memory_t: null, memory_stage: undefined });
  assert.equal(window.location.href, "http://app.test/memory_table?lang=zh");
  assert.equal(tab.replaced.length, 2);
  assert.deepEqual(tab.replaced[0].state, { page: 1 });      // Streamlit's history entry is kept
  v.writeAddress({ memory_t: null });                         // nothing changes: no history call
  assert.equal(tab.replaced.length, 2);
  assert.equal(v.readAddress().get("lang"), "zh");
});

test("the handshake: a new seq takes Python's position once, the same seq keeps the tab's", async () => {
  fakeTab();
  const v = await fresh();
  const view = { seq: null };
  assert.equal(v.pythonMoved(view, 1), true);
  assert.equal(v.pythonMoved(view, 1), false);
  assert.equal(v.pythonMoved(view, 2), true);
});

test("payloads: kept by hash, the most recent last, at most PAYLOADS_KEPT; a missing one is asked for", async () => {
  fakeTab();
  const v = await fresh();
  assert.equal(v.payloadOf("a", "GZ-A"), "GZ-A");
  assert.equal(v.payloadOf("a"), "GZ-A");                    // a later mount sends the hash alone
  assert.equal(v.payloadOf("missing"), null);
  assert.equal(v.tab().pendingNeed, "missing");             // no relay yet: asked once it mounts
  const asked = [];
  v.connectRelay(() => {}, (hash) => asked.push(hash));
  assert.deepEqual(asked, ["missing"]);
  assert.equal(v.tab().pendingNeed, null);
  v.payloadOf("gone");
  assert.deepEqual(asked, ["missing", "gone"]);
  for (let i = 0; i < v.PAYLOADS_KEPT; i++) v.payloadOf(`h${i}`, `gz${i}`);
  v.payloadOf("h0");                                        // used again: the most recent
  v.payloadOf("one-more", "gz");
  const kept = [...v.tab().payloads.keys()];
  assert.equal(kept.length, v.PAYLOADS_KEPT);
  assert.ok(!kept.includes("h1") && kept.includes("h0") && kept.at(-1) === "one-more");
});

test("a payload mounted again by its hash alone stays kept while newer ones arrive; a missing one is not asked for", async () => {
  fakeTab();
  const v = await fresh();
  const asked = [];
  v.connectRelay(() => {}, (hash) => asked.push(hash));
  v.payloadOf("shown", "GZ");                               // a player showing it all along
  for (let i = 0; i < 2 * v.PAYLOADS_KEPT; i++) {
    v.payloadOf(`h${i}`, `gz${i}`);                         // other views' payloads reach the tab
    v.keepRecent("shown");                                  // each run mounts the player again, by hash
  }
  assert.equal(v.payloadOf("shown"), "GZ");
  v.keepRecent("never-sent");
  assert.deepEqual(asked, []);
  assert.ok(!v.tab().payloads.has("never-sent"));
});

function views(v, document) {
  document.body.innerHTML = '<div id="p"><button id="step">next</button></div><div id="x"></div>'
    + '<button id="share">Share</button><a data-testid="stTopNavLink" href="/compare"><span id="nav">Compare</span></a>'
    + '<p id="prose">text</p><input id="prompt">';
  const player = v.register({ kind: "position", id: "memory", root: document.getElementById("p"), moved: false,
                              message: () => ({ t: 3, stage: "write" }) });
  const explorer = v.register({ kind: "values", id: "start", root: document.getElementById("x"), moved: false,
                                message: () => ({ values: { start_T: "5" } }) });
  return { player, explorer };
}

test("which presses flush: a control outside every view, Enter outside; never a page link, inside a view or prose", async () => {
  const { document } = fakeTab();
  const v = await fresh();
  views(v, document);
  const at = (id) => document.getElementById(id);
  assert.equal(v.leaves(at("share")), true);
  assert.equal(v.leaves(at("prompt"), { key: true }), true);
  assert.equal(v.leaves(at("nav")), false);                  // a page link: its run would race the switch
  assert.equal(v.leaves(at("nav"), { key: true }), false);
  assert.equal(v.leaves(at("step")), false);                 // the player's own button
  assert.equal(v.leaves(at("prose")), false);                // not a control
  assert.equal(v.leaves(at("prose"), { key: true }), true);   // Enter anywhere outside
});

test("the flush: one typed batch of the moved, mounted views; kept moved while no relay; numbered", async () => {
  const tab = fakeTab();
  const v = await fresh();
  const { player, explorer } = views(v, tab.document);
  player.moved = true;
  tab.press(tab.document.getElementById("share"));           // no relay mounted yet: nothing lost
  assert.equal(player.moved, true);
  const sent = [];
  v.connectRelay((batch) => sent.push(batch), () => {});
  tab.press(tab.document.getElementById("nav"));             // a page link: the move stays for later
  assert.deepEqual(sent, []);
  explorer.moved = true;
  tab.press(tab.document.getElementById("share"));
  assert.deepEqual(sent, [{ n: 1, messages: [{ kind: "position", id: "memory", t: 3, stage: "write" },
                                             { kind: "values", id: "start", values: { start_T: "5" } }] }]);
  assert.equal(player.moved || explorer.moved, false);
  tab.press(tab.document.getElementById("share"));           // nothing moved since: nothing sent
  assert.equal(sent.length, 1);
  player.moved = true;
  tab.document.getElementById("p").remove();                 // a view no longer on the page says nothing
  tab.key("Enter");
  assert.equal(sent.length, 1);
});

test("follow-me: moved once per seq, only when every view is ready, not before a view that can follow", async () => {
  fakeTab();
  const v = await fresh();
  document.body.innerHTML = '<div id="p"></div>';
  v.followTo({ seq: "a", params: { memory_t: "3" } });        // no view yet: kept for the first one
  const went = [];
  let ready = false;
  v.register({ kind: "position", id: "memory", root: document.getElementById("p"), moved: false, message: () => ({}),
               ready: () => ready, follow: (params) => went.push(params) });
  v.applyFollow();
  assert.deepEqual(went, []);                                 // still unpacking
  ready = true;
  v.applyFollow();
  v.applyFollow();
  assert.deepEqual(went, [{ memory_t: "3" }]);
  v.followTo({ seq: "a", params: { memory_t: "3" } });        // the same view polled again
  v.followTo({ seq: "b", params: { memory_t: "4" } });
  assert.deepEqual(went, [{ memory_t: "3" }, { memory_t: "4" }]);
});

test("once: per tab and name, whichever module asks", async () => {
  fakeTab();
  const [a, b] = [await fresh(), await fresh()];
  let n = 0;
  a.once("keys", () => { n += 1; });
  b.once("keys", () => { n += 1; });
  a.once("other", () => { n += 10; });
  assert.equal(n, 11);
});
