// assets/follow/follow.js: a student's tab loads the teacher's page once, or hands the step to the players.
import test from "node:test";
import assert from "node:assert/strict";

import follow from "./follow.js";

test("navigates once to the teacher's address, resolved against the tab's", () => {
  const assigned = [];
  globalThis.window = { location: { href: "http://class.local/memory_table?follow=AB", assign: (u) => assigned.push(u) } };
  follow({ data: { navigate: "compare?compare_t=4" } });
  follow({ data: { navigate: "compare?compare_t=4" } });      // a rerun with the same target: no second load
  assert.deepEqual(assigned, ["http://class.local/compare?compare_t=4"]);
  follow({ data: { navigate: "cost" } });
  assert.deepEqual(assigned.at(-1), "http://class.local/cost");
});

test("without navigate, the step goes to the player registry and applyFollow runs", () => {
  let applied = 0;
  globalThis.window = { location: { href: "http://x/", assign: () => assert.fail("must not navigate") },
                        __gdnPlayers: { players: new Map(), last: null, applyFollow: () => { applied += 1; } } };
  const step = { prefix: "memory", t: 3, stage: "write" };
  follow({ data: step });
  assert.equal(window.__gdnPlayers.follow, step);
  assert.equal(applied, 1);
});
