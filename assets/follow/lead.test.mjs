// assets/follow/lead.js: the teacher's tab reports its view (page + query without the teacher's own
// settings, sorted) once the address has held still settleMs, and never during a click's quiet second.
import test from "node:test";
import assert from "node:assert/strict";

import { component } from "../common/fake_tab.mjs";

const { default: lead } = await component("follow/lead.js");

function fakeTab(search) {
  const listeners = [];
  const timers = [];
  let clock = 0;
  const target = { addEventListener: (type, fn, capture) => listeners.push({ type, fn, capture }) };
  globalThis.window = { ...target, location: { search } };
  globalThis.document = { ...target };
  Object.defineProperty(globalThis, "performance", { value: { now: () => clock }, configurable: true, writable: true });
  globalThis.setInterval = (fn, ms) => { timers.push({ fn, ms }); return timers.length; };
  globalThis.clearInterval = (id) => { timers[id - 1].cleared = true; };
  const tick = (ms) => { clock += ms; for (const t of timers) if (!t.cleared) t.fn(); };
  return { listeners, timers, tick, fire: (type, event) => listeners.filter((l) => l.type === type).forEach((l) => l.fn(event)) };
}

const data = { page: "memory_table", own: ["lang", "mode", "join", "follow"], settleMs: 120 };

test("reports the view once it held still, without the teacher's own settings, sorted", () => {
  const tab = fakeTab("?memory_t=3&lang=zh&follow=ABCD&a=1");
  const sent = [];
  lead({ data, setStateValue: (k, v) => sent.push([k, v]) });
  assert.equal(tab.timers.length, 1);
  tab.tick(50);                       // first sight of the view
  tab.tick(50);
  assert.deepEqual(sent, []);         // not yet settled
  tab.tick(100);
  assert.deepEqual(sent, [["view", "memory_table?a=1&memory_t=3"]]);
  tab.tick(50); tab.tick(50);
  assert.equal(sent.length, 1);       // the same view is not sent twice
});

test("a pointerdown hushes the report for a second; one timer and one set of listeners per tab", () => {
  delete globalThis.window?.__gdnView;            // a new tab
  const tab = fakeTab("?compare_t=2");
  const sent = [];
  const cleanup = lead({ data: { ...data, page: "compare" }, setStateValue: (k, v) => sent.push([k, v]) });
  lead({ data: { ...data, page: "compare" }, setStateValue: (k, v) => sent.push([k, v]) });
  assert.equal(tab.timers.length, 1);
  assert.equal(tab.listeners.filter((l) => l.type === "pointerdown").length, 1);
  tab.tick(50);
  tab.fire("pointerdown", {});
  tab.tick(500);
  assert.deepEqual(sent, []);
  tab.tick(600);
  assert.deepEqual(sent, [["view", "compare?compare_t=2"]]);
  cleanup();
  assert.equal(tab.timers[0].cleared, true);
});

test("a press inside a view the browser answers (the player's Next) is reported at once, unhushed", () => {
  delete globalThis.window?.__gdnView;            // a new tab
  const tab = fakeTab("?memory_t=4");
  const next = { id: "next" };
  const sent = [];
  lead({ data, setStateValue: (k, v) => sent.push([k, v]) });
  window.__gdnView.views.set("player:memory", { kind: "player", id: "memory", connected: () => true,
                                                holds: (node) => node === next });
  tab.tick(50);
  tab.fire("pointerdown", { target: next });      // a step clicked in the player: no run of its own
  tab.tick(100); tab.tick(100);
  assert.deepEqual(sent, [["view", "memory_table?memory_t=4"]]);
  tab.fire("pointerdown", { target: { id: "share" } });     // outside every view: hushed a second
  window.location.search = "?memory_t=5";
  tab.tick(50); tab.tick(500);
  assert.equal(sent.length, 1);
});
