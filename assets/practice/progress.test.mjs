// assets/practice/progress.js: progress kept in localStorage, merged with the session's, and handed back
// to Python only when the browser knows more than Python sent.
import test from "node:test";
import assert from "node:assert/strict";

import keep, { merged } from "./progress.js";

function storage(initial = {}) {
  const m = new Map(Object.entries(initial));
  return { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, String(v)), m };
}

test("merging keeps a pass once made and the larger count of failed runs", () => {
  const kept = { read: { passed: true, fails: 1 }, gates: { passed: false, fails: 3 } };
  assert.deepEqual(merged(kept, { read: { passed: false, fails: 0 }, gates: { passed: true, fails: 2 } }),
                   { read: { passed: true, fails: 1 }, gates: { passed: true, fails: 3 } });
});

test("a fresh session gets the browser's progress back; one that knows it all sends nothing", () => {
  const store = storage({ "gdn.practice.progress": JSON.stringify({ read: { passed: true, fails: 2 } }) });
  globalThis.window = { localStorage: store };
  const sent = [];
  keep({ data: { progress: {} }, setStateValue: (k, v) => sent.push([k, v]) });
  assert.deepEqual(sent, [["progress", { read: { passed: true, fails: 2 } }]]);
  keep({ data: { progress: { read: { passed: true, fails: 2 } } }, setStateValue: (k, v) => sent.push([k, v]) });
  assert.equal(sent.length, 1);
  keep({ data: { progress: { read: { passed: true, fails: 2 }, chunk: { passed: false, fails: 1 } } },
         setStateValue: (k, v) => sent.push([k, v]) });
  assert.equal(sent.length, 1);
  assert.deepEqual(JSON.parse(store.getItem("gdn.practice.progress")).chunk, { passed: false, fails: 1 });
});

test("a damaged store is read as no progress", () => {
  globalThis.window = { localStorage: storage({ "gdn.practice.progress": "{not json" }) };
  const sent = [];
  keep({ data: { progress: { read: { passed: false, fails: 1 } } }, setStateValue: (k, v) => sent.push([k, v]) });
  assert.deepEqual(sent, []);
});

test("the same progress in another order is not sent back", () => {
  const store = storage({ "gdn.practice.progress": JSON.stringify({ b: { passed: true, fails: 0 }, a: { passed: false, fails: 1 } }) });
  globalThis.window = { localStorage: store };
  const sent = [];
  keep({ data: { progress: { a: { passed: false, fails: 1 }, b: { passed: true, fails: 0 } } },
         setStateValue: (k, v) => sent.push([k, v]) });
  assert.deepEqual(sent, []);
});
