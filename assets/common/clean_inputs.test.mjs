// assets/common/clean_inputs.js: a text input holding a lone surrogate is rewritten with U+FFFD through the
// prototype's value setter, by one capture-phase listener per tab.
import test from "node:test";
import assert from "node:assert/strict";

import install, { cleanInput } from "./clean_inputs.js";

function tab() {
  const listeners = [];
  const sets = [];
  class HTMLInputElement {}
  class HTMLTextAreaElement {}
  for (const cls of [HTMLInputElement, HTMLTextAreaElement]) {
    Object.defineProperty(cls.prototype, "value", {
      get() { return this._value; },
      set(v) { sets.push(v); this._value = v; },
      configurable: true,
    });
  }
  globalThis.HTMLInputElement = HTMLInputElement;
  globalThis.HTMLTextAreaElement = HTMLTextAreaElement;
  globalThis.window = { addEventListener: (type, fn, capture) => listeners.push({ type, fn, capture }) };
  const make = (cls, value) => { const el = new cls(); el._value = value; return el; };
  return { listeners, sets, make, HTMLInputElement, HTMLTextAreaElement };
}

function cleans() {
  const t = tab();
  const area = t.make(t.HTMLTextAreaElement, "a\uD800b\uDFFFc 😀");
  cleanInput(area);
  assert.equal(area._value, "a\uFFFDb\uFFFDc 😀");
  cleanInput(t.make(t.HTMLInputElement, "fine 😀"));
  assert.deepEqual(t.sets, ["a\uFFFDb\uFFFDc 😀"]);      // a clean value is not written again
  cleanInput({ value: "\uD800" });                           // not a text input: left alone
  assert.equal(t.sets.length, 1);
}

test("lone surrogates become U+FFFD, whole pairs stay (String.prototype.toWellFormed)", () => cleans());

test("the same without toWellFormed (the fallback loop of older browsers)", () => {
  const own = String.prototype.toWellFormed;
  delete String.prototype.toWellFormed;
  try { cleans(); } finally { if (own) String.prototype.toWellFormed = own; }
});

test("one listener per tab, in the capture phase, that cleans what it hears", () => {
  const t = tab();
  install();
  install();                                                 // the next run's mount: no second listener
  assert.equal(t.listeners.length, 1);
  assert.equal(t.listeners[0].capture, true);
  const area = t.make(t.HTMLTextAreaElement, "\uDC00");
  t.listeners[0].fn({ target: area });
  assert.equal(area._value, "\uFFFD");
});
