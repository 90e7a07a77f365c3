// assets/common/clean_inputs.js (a plain script, run in a node:vm context with a fake window): a text input
// holding a lone surrogate is rewritten with U+FFFD through the prototype's value setter.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

const SOURCE = readFileSync(new URL("./clean_inputs.js", import.meta.url), "utf-8");

function tab({ withoutToWellFormed = false } = {}) {
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
  const window = { addEventListener: (type, fn, capture) => listeners.push({ type, fn, capture }) };
  const context = vm.createContext({ window, HTMLInputElement, HTMLTextAreaElement });
  if (withoutToWellFormed) vm.runInContext("delete String.prototype.toWellFormed", context);
  vm.runInContext(SOURCE, context);
  const input = (el) => listeners.filter((l) => l.type === "input").forEach((l) => l.fn({ target: el }));
  const make = (cls, value) => { const el = new cls(); el._value = value; return el; };
  return { context, listeners, sets, input, make, HTMLInputElement, HTMLTextAreaElement };
}

function cleans(withoutToWellFormed) {
  const t = tab({ withoutToWellFormed });
  const area = t.make(t.HTMLTextAreaElement, "a\uD800b\uDFFFc 😀");
  t.input(area);
  assert.equal(area._value, "a\uFFFDb\uFFFDc 😀");
  const field = t.make(t.HTMLInputElement, "fine 😀");
  t.input(field);
  assert.deepEqual(t.sets, ["a\uFFFDb\uFFFDc 😀"]);      // a clean value is not written again
  t.input({ value: "\uD800" });                              // not a text input: left alone
  assert.equal(t.sets.length, 1);
}

test("lone surrogates become U+FFFD, whole pairs stay (String.prototype.toWellFormed)", () => cleans(false));

test("the same without toWellFormed (the fallback loop of older browsers)", () => cleans(true));

test("runs once per tab, listening in the capture phase", () => {
  const t = tab();
  vm.runInContext(SOURCE, t.context);
  assert.equal(t.listeners.length, 1);
  assert.equal(t.listeners[0].capture, true);
});

test("no '<' followed by a letter, '/' or '!': DOMPurify would drop the script", () => {
  assert.doesNotMatch(SOURCE, /<[A-Za-z/!]/);
});
