// assets/live/clicker.js: the clicker's keys run the room, are never a scroll, and leave typing alone. Mounted
// as pack.py's component_js builds it: its keys come through assets/common/keys.js's one listener.
import test from "node:test";
import assert from "node:assert/strict";

import { component, fakeTab } from "../common/fake_tab.mjs";

const ROOM = '<textarea id="notes"></textarea><div role="combobox"><input id="picker"></div>'
  + '<div role="tablist"><button id="tab" role="tab">demo</button></div><input id="range" type="range">'
  + '<input id="box" type="checkbox"><button id="ask">ask</button>';

async function room() {
  const tab = fakeTab("http://app.test/classroom?lang=en", ROOM);
  const { default: clicker, action } = await component("live/clicker.js");
  const sent = [];
  const cleanup = clicker({ data: { round: 3 }, setTriggerValue: (name, value) => sent.push([name, value]) });
  const on = (id) => document.getElementById(id);
  return { tab, clicker, action, sent, cleanup, on, blanked: () => !!on("gdn-live-blank") };
}

test("PageDown and → are next, PageUp and ← back, B and . blank; other keys are not the room's", async () => {
  const { action } = await room();
  const key = (name, extra = {}) => ({ key: name, target: document.body, ...extra });
  assert.deepEqual(["PageDown", "ArrowRight", "PageUp", "ArrowLeft", "b", "B", "."].map((k) => action(key(k))),
                   ["next", "next", "back", "back", "blank", "blank", "blank"]);
  assert.equal(action(key("ArrowDown")), null);
  assert.equal(action(key("PageDown", { ctrlKey: true })), null);           // the browser's tab switch
  assert.equal(action(key("ArrowRight"), { typing: true }), null);           // typing in the question picker
});

test("typing keeps its keys; a focused tab or slider keeps its arrows, but PageDown still runs the room", async () => {
  const { tab, sent, on } = await room();
  for (const id of ["notes", "picker"]) {
    assert.equal(tab.key("PageDown", on(id)).defaultPrevented, false, id);
  }
  for (const id of ["tab", "range"]) assert.equal(tab.key("ArrowRight", on(id)).defaultPrevented, false, id);
  assert.deepEqual(sent, []);
  for (const id of ["tab", "range", "box", "ask"]) assert.equal(tab.key("PageDown", on(id)).defaultPrevented, true, id);
  assert.equal(sent.length, 4);
});

test("a clicker key is taken from the page (no scroll) and sent once; B blanks and lifts the screen", async () => {
  const { tab, sent, blanked } = await room();
  assert.equal(tab.key("PageDown").defaultPrevented, true);
  assert.deepEqual(sent, [["key", { go: "next", round: 3 }]]);
  const held = new window.Event("keydown", { bubbles: true, cancelable: true });
  Object.assign(held, { key: "PageDown", repeat: true });
  window.dispatchEvent(held);
  assert.ok(held.defaultPrevented);                                          // held down: still no scroll,
  assert.equal(sent.length, 1);                                              // and no second move
  tab.key("b");
  assert.ok(blanked());
  assert.equal(sent.length, 1);                                              // blanking is the browser's alone
  tab.key("B");
  assert.ok(!blanked());
  tab.key("b");
  tab.key("PageUp");                                                         // moving on lifts the blank too
  assert.ok(!blanked());
  assert.deepEqual(sent.at(-1), ["key", { go: "back", round: 3 }]);
  assert.equal(tab.key(" ").defaultPrevented, false);
});

test("one handler per tab, however often the room draws the component; unmounting removes it", async () => {
  const { tab, clicker, sent, cleanup } = await room();
  const latest = [];
  clicker({ data: { round: 4 }, setTriggerValue: (name, value) => latest.push(value) });
  tab.key("ArrowRight");
  assert.deepEqual([sent, latest], [[], [{ go: "next", round: 4 }]]);         // the latest draw's trigger and round
  assert.equal(window.__gdnView.keys.size, 1);
  tab.key("b");
  cleanup();
  assert.equal(document.getElementById("gdn-live-blank"), null);              // unmounted: the screen is lifted
  assert.equal(tab.key("ArrowRight").defaultPrevented, false);
  assert.equal(latest.length, 1);
});
