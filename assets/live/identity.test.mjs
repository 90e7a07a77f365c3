// assets/live/identity.js: one random voter id per browser (localStorage), and the teacher's room kept.
import test from "node:test";
import assert from "node:assert/strict";

import identity from "./identity.js";

function browser(initial) {
  const m = new Map(initial === undefined ? [] : [["gdn-live", initial]]);
  globalThis.window = {
    localStorage: { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, v) },
    crypto: { getRandomValues: (bytes) => { bytes.forEach((_, i) => { bytes[i] = i * 17; }); return bytes; } },
  };
  return m;
}

function run(data) {
  const state = {};
  identity({ data, setStateValue: (k, v) => { state[k] = v; } });
  return state;
}

test("a new browser gets a 32-hex voter id, stored and reused", () => {
  const m = browser();
  const first = run({});
  assert.match(first.voter, /^[0-9a-f]{32}$/);
  assert.equal(first.voter.slice(0, 6), "001122");
  assert.equal(first.host, null);
  assert.equal(JSON.parse(m.get("gdn-live")).voter, first.voter);
  window.crypto.getRandomValues = () => assert.fail("an id is made once per browser");
  assert.equal(run({}).voter, first.voter);
});

test("the teacher's room is kept until data says otherwise; broken storage starts afresh", () => {
  const m = browser("{not json");
  const room = { code: "ABCD", secret: "s" };
  assert.deepEqual(run({ host: room }).host, room);
  assert.deepEqual(run({}).host, room);                    // no "host" in data: kept
  assert.equal(run({ host: null }).host, null);            // the room closed
  assert.equal(JSON.parse(m.get("gdn-live")).host, null);
});
