// assets/common/pack.js: a payload packed as pack.py packs it comes back as it was; a component's stylesheet
// is one <style> in the head, rewritten only when its text changed; el() builds and attaches.
import test from "node:test";
import assert from "node:assert/strict";

import { component, fakeTab, packed } from "./fake_tab.mjs";

test("unpack reverses pack_json: base64 of gzip of JSON, non-ASCII text included", async () => {
  fakeTab();
  const { unpack } = await component(null, { expose: ["unpack"] });
  const payload = { frames: [{ html: "<td>α = 0.5</td>", narration: "写入 β" }], fixed: "", n: [1, 2.5] };
  assert.deepEqual(await unpack(packed(payload)), payload);
  assert.equal(await unpack(packed("<p>one layer</p>")), "<p>one layer</p>");
});

test("addStyle: one style element per id, its text replaced only when it changed", async () => {
  fakeTab();
  const { addStyle } = await component(null, { expose: ["addStyle"] });
  addStyle("gdn-player-css", ".a { color: red; }");
  const style = document.getElementById("gdn-player-css");
  addStyle("gdn-player-css", ".a { color: red; }");
  assert.equal(document.head.querySelectorAll("style").length, 1);
  addStyle("gdn-player-css", ".a { color: blue; }");
  assert.equal(document.getElementById("gdn-player-css"), style);
  assert.equal(style.textContent, ".a { color: blue; }");
});

test("el: a tag with its class, appended to the parent given", async () => {
  fakeTab();
  const { el } = await component(null, { expose: ["el"] });
  const bar = el("div", "gdn-player-bar", document.body);
  const b = el("button", "gdn-btn gdn-next", bar);
  assert.equal(document.body.lastChild, bar);
  assert.equal(bar.firstChild, b);
  assert.equal(b.className, "gdn-btn gdn-next");
  assert.equal(el("span").parentNode, null);
});

test("loadPayload: unpacks once, a shown hash only moves up, a missing one clears and is asked, a stale one is dropped", async () => {
  fakeTab();
  const { loadPayload, connectRelay, tab } = await component(null, { expose: ["loadPayload", "connectRelay", "tab"] });
  const asked = [];
  connectRelay(() => {}, (hash) => asked.push(hash));
  const calls = [];
  const hooks = { clear: () => calls.push("clear"), apply: (payload) => calls.push(payload) };
  const view = { hash: null, data: { hash: "a", gz: packed({ n: 1 }) } };
  await loadPayload(view, hooks);
  assert.deepEqual([calls, view.hash], [[{ n: 1 }], "a"]);
  await loadPayload({ hash: null, data: { hash: "b", gz: packed({ n: 2 }) } }, hooks);
  assert.deepEqual([...tab().payloads.keys()], ["a", "b"]);
  view.data = { hash: "a" };                                    // mounted again, by hash alone: shown already
  await loadPayload(view, hooks);
  assert.equal(calls.length, 2);
  assert.deepEqual([...tab().payloads.keys()], ["b", "a"]);    // the most recent last, as Python counts it
  view.data = { hash: "gone" };
  await loadPayload(view, hooks);
  assert.deepEqual([calls.at(-1), view.hash, asked], ["clear", null, ["gone"]]);
  view.data = { hash: "c", gz: packed({ n: 3 }) };
  const loading = loadPayload(view, hooks);
  view.data = { hash: "d", gz: packed({ n: 4 }) };              // a newer mount while unpacking
  await loading;
  assert.deepEqual([calls.at(-1), view.hash], ["clear", null]);
});
