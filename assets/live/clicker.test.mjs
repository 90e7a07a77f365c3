// assets/live/clicker.js: the clicker's keys run the room, are never a scroll, and leave typing alone.
import test from "node:test";
import assert from "node:assert/strict";

import clicker, { action, onKey } from "./clicker.js";

function page() {
  const nodes = new Map();
  const doc = {
    getElementById: (id) => nodes.get(id) || null,
    createElement: () => {
      const el = { setAttribute() {}, remove() { nodes.delete(el.id); } };
      return el;
    },
    body: { appendChild: (el) => nodes.set(el.id, el) },
  };
  return doc;
}

function key(name, extra = {}) {
  const event = { key: name, target: { closest: () => null }, prevented: false, stopped: false, ...extra };
  event.preventDefault = () => { event.prevented = true; };
  event.stopPropagation = () => { event.stopped = true; };
  return event;
}

test("PageDown and → are next, PageUp and ← back, B and . blank; other keys are not the room's", () => {
  assert.deepEqual(["PageDown", "ArrowRight", "PageUp", "ArrowLeft", "b", "B", "."].map((k) => action(key(k))),
                   ["next", "next", "back", "back", "blank", "blank", "blank"]);
  assert.equal(action(key("ArrowDown")), null);
  assert.equal(action(key("PageDown", { ctrlKey: true })), null);           // the browser's tab switch
  const inPicker = key("ArrowRight", { target: { closest: (s) => (s.includes("combobox") ? {} : null) } });
  assert.equal(action(inPicker), null);                                     // typing in the question picker
  const onTab = (name) => key(name, { target: { closest: (s) => (s.includes('role="tab"') ? {} : null) } });
  assert.equal(action(onTab("ArrowRight")), null);                          // a focused tab keeps its arrows
  assert.equal(action(onTab("PageDown")), "next");                          // but the clicker still runs the room
});

test("a clicker key is taken from the page (no scroll) and sent once; B blanks and lifts the screen", () => {
  const sent = [];
  const state = { doc: page(), round: 3, send: (name, value) => sent.push([name, value]) };
  const down = key("PageDown");
  onKey(down, state);
  assert.ok(down.prevented && down.stopped);
  assert.deepEqual(sent, [["key", { go: "next", round: 3 }]]);
  onKey(key("PageDown", { repeat: true }), state);                          // held down: still no scroll, no 2nd move
  assert.equal(sent.length, 1);
  onKey(key("b"), state);
  assert.ok(state.doc.getElementById("gdn-live-blank"));
  assert.equal(sent.length, 1);                                             // blanking is the browser's alone
  onKey(key("B"), state);
  assert.equal(state.doc.getElementById("gdn-live-blank"), null);
  onKey(key("b"), state);
  onKey(key("PageUp"), state);                                              // moving on lifts the blank too
  assert.equal(state.doc.getElementById("gdn-live-blank"), null);
  assert.deepEqual(sent.at(-1), ["key", { go: "back", round: 3 }]);
  const space = key(" ");
  onKey(space, state);
  assert.ok(!space.prevented);
});

test("one listener per tab, however often the room draws the component; unmounting removes it", () => {
  const listeners = [];
  globalThis.document = page();
  globalThis.window = {
    addEventListener: (type, fn) => listeners.push(fn),
    removeEventListener: (type, fn) => listeners.splice(listeners.indexOf(fn), 1),
  };
  const sent = [];
  clicker({ data: { round: 1 }, setTriggerValue: () => sent.push("old") });
  const cleanup = clicker({ data: { round: 2 }, setTriggerValue: (name, value) => sent.push(value) });
  assert.equal(listeners.length, 1);
  listeners[0](key("ArrowRight"));
  assert.deepEqual(sent, [{ go: "next", round: 2 }]);                       // the latest draw's trigger and round
  cleanup();
  assert.equal(listeners.length, 0);
});
