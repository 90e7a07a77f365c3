// assets/common/hover.js: the one hover linker, for both kinds of marks (the page's data-tok, an explorer's
// data-link): what lights, what a sticky linker keeps, focus, and the light kept across swapped HTML.
import test from "node:test";
import assert from "node:assert/strict";

import { component, fakeTab } from "./fake_tab.mjs";

const MARKS = '<div id="scope"><i id="a1" data-link="a">a</i><i id="a2" data-link="a">a</i><i id="b" data-link="b">b</i>'
  + '<p id="plain">text</p><button id="focusable" data-link="b">b</button></div><i id="outside" data-link="a">a</i>';

async function linker(options) {
  fakeTab("http://app.test/start", MARKS);
  const { linkHovers } = await component(null, { expose: ["linkHovers"] });
  const scope = document.getElementById("scope");
  const seen = [];
  const linked = linkHovers(scope, { attribute: "link", litClass: "lit", onLight: (v) => seen.push(v), ...options });
  const fire = (id, type) => document.getElementById(id).dispatchEvent(new window.Event(type, { bubbles: true }));
  const lit = () => [...document.querySelectorAll(".lit")].map((n) => n.id);
  return { scope, linked, seen, fire, lit };
}

test("pointing at a mark lights its marks in the scope only; pointing at nothing or leaving puts it out", async () => {
  const { scope, linked, seen, fire, lit } = await linker({});
  fire("a1", "pointerover");
  assert.deepEqual(lit(), ["a1", "a2"]);                       // not the one outside the scope
  assert.equal(linked.lit(), "a");
  fire("a2", "pointerover");                                   // the same mark: no repaint, no second call
  fire("plain", "pointerover");
  assert.deepEqual(lit(), []);
  fire("b", "pointerover");
  scope.dispatchEvent(new window.Event("pointerleave"));
  assert.deepEqual(lit(), []);
  assert.deepEqual(seen, ["a", null, "b", null]);
  fire("focusable", "focusin");                                // focus is not followed unless asked
  assert.deepEqual(lit(), []);
});

test("sticky (the token cards): pointing at nothing keeps the light, only leaving the scope puts it out", async () => {
  const { scope, fire, lit } = await linker({ sticky: true });
  fire("b", "pointerover");
  fire("plain", "pointerover");
  assert.deepEqual(lit(), ["b", "focusable"]);
  scope.dispatchEvent(new window.Event("pointerleave"));
  assert.deepEqual(lit(), []);
});

test("focus lights as pointing does; repaint keeps the light on new HTML that has the mark, else puts it out", async () => {
  const { scope, linked, fire, lit } = await linker({ focus: true });
  fire("focusable", "focusin");
  assert.deepEqual(lit(), ["b", "focusable"]);
  scope.innerHTML = '<i id="b2" data-link="b">b</i><i id="a3" data-link="a">a</i>';   // an explorer's move
  linked.repaint();
  assert.deepEqual(lit(), ["b2"]);
  scope.innerHTML = '<i id="a4" data-link="a">a</i>';
  linked.repaint();
  assert.deepEqual([lit(), linked.lit()], [[], null]);
  fire("a4", "focusin");
  fire("a4", "focusout");
  assert.deepEqual(lit(), []);
});
