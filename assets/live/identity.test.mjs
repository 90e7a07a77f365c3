// assets/live/identity.js: a phone's seats and the teacher's room, kept in localStorage and checked.
import test from "node:test";
import assert from "node:assert/strict";

import identity, { cleaned } from "./identity.js";

function browser(initial) {
  const m = new Map(initial === undefined ? [] : [["gdn-live", initial]]);
  globalThis.window = {
    localStorage: { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, v) },
  };
  return m;
}

function run(data) {
  const state = {};
  identity({ data, setStateValue: (k, v) => { state[k] = v; } });
  return state;
}

const SEAT = "AbCdEf0123456789_-xyzw";

test("a seat the server minted is kept per room, reported on every visit, and dropped when told", () => {
  const m = browser();
  assert.deepEqual(run({}), { seats: {}, host: null });
  assert.deepEqual(run({ seat: { code: "ABC234", token: SEAT } }).seats, { ABC234: SEAT });
  assert.deepEqual(run({}).seats, { ABC234: SEAT });                      // a reload: the same seat
  assert.equal(JSON.parse(m.get("gdn-live")).seats.ABC234, SEAT);
  assert.deepEqual(run({ seat: { code: "ABC234", token: null } }).seats, {});
});

test("the teacher's room is kept until data says otherwise; broken storage starts afresh", () => {
  const m = browser("{not json");
  const room = { code: "ABCD23", secret: "s3cret-s3cret" };
  assert.deepEqual(run({ host: room }).host, room);
  assert.deepEqual(run({}).host, room);                    // no "host" in data: kept
  assert.equal(run({ host: null }).host, null);            // the room closed
  assert.equal(JSON.parse(m.get("gdn-live")).host, null);
});

test("what an old version or a hand edit left there is dropped, never handed to Python", () => {
  assert.deepEqual(cleaned({ voter: "x", host: { code: "ABCD23", secret: 12345 } }), { seats: {}, host: null });
  assert.deepEqual(cleaned({ host: { code: ["A"], secret: "s3cret-s3cret" } }).host, null);
  assert.deepEqual(cleaned({ seats: { ABC234: 7, abc: SEAT, ZZZZZZ: "short", QQQQQQ: SEAT } }).seats, { QQQQQQ: SEAT });
  assert.deepEqual(cleaned("text"), { seats: {}, host: null });
  browser(JSON.stringify({ host: { code: "ABCD23", secret: { evil: true } } }));
  assert.equal(run({}).host, null);
});
