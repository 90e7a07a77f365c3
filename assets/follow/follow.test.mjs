// assets/follow/follow.js: a student's tab loads the teacher's page once, or hands follow-me's position
// message to the views of the page (assets/common/view.js, followTo).
import test from "node:test";
import assert from "node:assert/strict";

import { component, fakeTab } from "../common/fake_tab.mjs";

test("navigates once to the teacher's address, resolved against the tab's", async () => {
  fakeTab("http://class.local/memory_table?follow=AB");
  const assigned = [];
  window.location.assign = (u) => assigned.push(u);
  const { default: follow } = await component("follow/follow.js");
  follow({ data: { navigate: "compare?compare_t=4" } });
  follow({ data: { navigate: "compare?compare_t=4" } });      // a rerun with the same target: no second load
  assert.deepEqual(assigned, ["http://class.local/compare?compare_t=4"]);
  follow({ data: { navigate: "cost" } });
  assert.deepEqual(assigned.at(-1), "http://class.local/cost");
});

test("without navigate, the position message goes to every view that follows, once per seq", async () => {
  fakeTab("http://class.local/memory_table?follow=AB", '<div id="p"></div>');
  window.location.assign = () => assert.fail("must not navigate");
  const { default: follow, register } = await component("follow/follow.js", { expose: ["register"] });
  const went = [];
  register({ kind: "position", id: "memory", root: document.getElementById("p"), follow: (params) => went.push(params) });
  const message = { seq: "9f2c", params: { memory_t: "3", memory_stage: "write" } };
  follow({ data: message });
  follow({ data: message });                                   // the poll's next tick: the same view
  assert.deepEqual(went, [message.params]);
});
