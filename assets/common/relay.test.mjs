// assets/player/relay.js: the players' way to Python (relay, need) and the linked hovers over [data-tok].
import test from "node:test";
import assert from "node:assert/strict";

import relay from "./relay.js";

function el(dataset = {}) {
  const classes = new Set();
  return { dataset, hidden: false, classList: { add: (c) => classes.add(c), remove: (c) => classes.delete(c), has: (c) => classes.has(c) } };
}

function page() {
  const listeners = [];
  const tokA = el({ tok: "3" });
  const tokB = el({ tok: "4" });
  const cards = [el({ card: "none" }), el({ card: "3" }), el({ card: "4" })];
  const slot = { children: cards };
  globalThis.CSS = { escape: (s) => s };
  globalThis.window = {};
  globalThis.document = {
    addEventListener: (type, fn) => listeners.push({ type, fn }),
    querySelectorAll: (sel) => {
      if (sel === ".gdn-tok-hover") return [tokA, tokB].filter((e) => e.classList.has("gdn-tok-hover"));
      if (sel === ".gdn-tok-slot") return [slot];
      const m = sel.match(/^\[data-tok="(.*)"\]$/);
      if (m) return [tokA, tokB].filter((e) => e.dataset.tok === m[1]);
      throw new Error(`unexpected selector ${sel}`);
    },
  };
  const fire = (type, event) => listeners.filter((l) => l.type === type).forEach((l) => l.fn(event));
  return { listeners, tokA, tokB, cards, fire };
}

test("relay and need reach Python; a need asked before the relay mounted is sent then", () => {
  page();
  window.__gdnPlayers = { players: new Map(), last: null, pendingNeed: "abc123" };
  const state = [];
  const triggers = [];
  relay({ setStateValue: (k, v) => state.push([k, v]), setTriggerValue: (k, v) => triggers.push([k, v]) });
  assert.deepEqual(triggers, [["need", "abc123"]]);
  assert.equal(window.__gdnPlayers.pendingNeed, null);
  window.__gdnPlayers.need("def");
  assert.deepEqual(triggers.at(-1), ["need", "def"]);
  window.__gdnPlayers.relay("memory_t", 4);
  assert.deepEqual(state, [["memory_t", 4]]);
});

test("pointing at a token lights its elements and shows its card; leaving shows the none card; listeners once", () => {
  const p = page();
  relay({ setStateValue: () => {}, setTriggerValue: () => {} });
  relay({ setStateValue: () => {}, setTriggerValue: () => {} });
  assert.equal(p.listeners.length, 2);
  p.fire("pointerover", { target: { closest: () => p.tokA } });
  assert.ok(p.tokA.classList.has("gdn-tok-hover"));
  assert.ok(!p.tokB.classList.has("gdn-tok-hover"));
  assert.deepEqual(p.cards.map((c) => c.hidden), [true, false, true]);
  p.fire("pointerleave", {});
  assert.ok(!p.tokA.classList.has("gdn-tok-hover"));
  assert.deepEqual(p.cards.map((c) => c.hidden), [false, true, true]);
});
