// assets/common/keeper.js: the tab keeps the prompt in sessionStorage and hands it back after a server change.
import test from "node:test";
import assert from "node:assert/strict";

import keeper from "./keeper.js";

function storage() {
  const m = new Map();
  return { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, String(v)), m };
}

test("stores the kept values and the server id; a fresh session on another server gets them back once", () => {
  const store = storage();
  globalThis.window = { sessionStorage: store };
  const triggers = [];
  const setTriggerValue = (k, v) => triggers.push([k, v]);
  keeper({ data: { server: "s1", fresh: true, kept: { real_model_preset: "copy" } }, setTriggerValue });
  assert.equal(store.getItem("gdn.server"), "s1");
  assert.deepEqual(JSON.parse(store.getItem("gdn.kept")), { real_model_preset: "copy" });
  assert.deepEqual(triggers, []);
  keeper({ data: { server: "s2", fresh: true, kept: null }, setTriggerValue });
  assert.deepEqual(triggers, [["moved", { real_model_preset: "copy" }]]);
  assert.equal(store.getItem("gdn.server"), "s2");
});

test("a session that is not fresh on another server does not restore", () => {
  const store = storage();
  store.setItem("gdn.server", "s1");
  store.setItem("gdn.kept", JSON.stringify({ real_model_prompt_edit: "abc" }));
  globalThis.window = { sessionStorage: store };
  const triggers = [];
  keeper({ data: { server: "s2", fresh: false, kept: { real_model_prompt_edit: "xyz" } }, setTriggerValue: (k, v) => triggers.push([k, v]) });
  assert.deepEqual(triggers, []);
  assert.deepEqual(JSON.parse(store.getItem("gdn.kept")), { real_model_prompt_edit: "xyz" });
});
