// assets/common/relay.js: the views' way to Python (a typed batch, a need for payloads) and the linked hovers
// over [data-tok].
import test from "node:test";
import assert from "node:assert/strict";

import { component, fakeTab } from "./fake_tab.mjs";

const mount = async () => component("common/relay.js", { expose: ["tab", "payloadOf", "register", "flush"] });

test("a batch and a need reach Python; a need asked before the relay mounted is sent then", async () => {
  fakeTab("http://app.test/memory_table", '<div id="p"></div>');
  const { default: relay, tab, payloadOf, register, flush } = await mount();
  assert.equal(payloadOf("abc123"), null);                     // a payload the tab lacks, before the relay
  const state = [];
  const triggers = [];
  relay({ setStateValue: (k, v) => state.push([k, v]), setTriggerValue: (k, v) => triggers.push([k, v]) });
  assert.deepEqual(triggers, [["need", "abc123"]]);
  assert.equal(tab().pendingNeed, null);
  payloadOf("def");
  assert.deepEqual(triggers.at(-1), ["need", "def"]);
  register({ kind: "position", id: "memory", root: document.getElementById("p"), moved: true,
             message: () => ({ t: 4, stage: "read" }) });
  flush();
  assert.deepEqual(state, [["sent", { n: 1, messages: [{ kind: "position", id: "memory", t: 4, stage: "read" }] }]]);
});

test("pointing at a token lights its elements and shows its card; leaving shows the none card; listeners once", async () => {
  fakeTab("http://app.test/real_model", '<span id="a" data-tok="3"></span><span id="b" data-tok="4"></span>'
    + '<i id="c3" data-tok="3"></i><div class="gdn-tok-slot"><p data-card="none"></p><p data-card="3"></p>'
    + '<p data-card="4"></p></div>');
  const { default: relay } = await mount();
  const added = [];
  const add = document.addEventListener.bind(document);
  document.addEventListener = (type, ...rest) => { added.push(type); add(type, ...rest); };
  relay({ setStateValue: () => {}, setTriggerValue: () => {} });
  relay({ setStateValue: () => {}, setTriggerValue: () => {} });   // a rerun: no second set of listeners
  assert.deepEqual(added, ["pointerover", "pointerleave"]);
  const lit = () => [...document.querySelectorAll(".gdn-tok-hover")].map((n) => n.id);
  const cards = () => [...document.querySelectorAll("[data-card]")].map((c) => c.hidden);
  document.getElementById("a").dispatchEvent(new window.Event("pointerover", { bubbles: true }));
  assert.deepEqual(lit(), ["a", "c3"]);
  assert.deepEqual(cards(), [true, false, true]);
  document.dispatchEvent(new window.Event("pointerleave"));
  assert.deepEqual(lit(), []);
  assert.deepEqual(cards(), [false, true, true]);
});
