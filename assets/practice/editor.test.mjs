// assets/practice/editor.js: indenting, the code kept per exercise in localStorage, Run and Ctrl+Enter
// sending the code, and a redraw of the same exercise keeping the textarea (and the caret) as it is.
import test from "node:test";
import assert from "node:assert/strict";
import { component, fakeTab } from "../common/fake_tab.mjs";

const { default: mount, indent, storedCode } = await component("practice/editor.js", { css: "EDITOR_CSS" });

function storage() {
  const m = new Map();
  return { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, String(v)), m };
}

const WORDS = { label: "Your code", help: "Tab indents", run: "Run the tests", reset: "Start over" };
const data = (exercise, extra = {}) => ({ exercise, stub: `def ${exercise}():\n    pass\n`, words: WORDS,
                                         lecture: false, disabled: false, ...extra });

function tab() {
  const { window, key } = fakeTab("http://app.test/practice?lang=en", '<div id="host"></div>');
  window.localStorage = storage();
  const host = document.getElementById("host");
  const sent = [];
  const draw = (d) => mount({ data: d, parentElement: host, setTriggerValue: (k, v) => sent.push([k, v]) });
  return { window, host, sent, draw, key };
}

test("indent adds four spaces at a caret and to every selected line; outdent removes up to four", () => {
  assert.deepEqual(indent("ab", 1, 1), { text: "a    b", start: 5, end: 5 });
  const two = "x = 1\ny = 2\n";
  const moved = indent(two, 0, 9);
  assert.equal(moved.text, "    x = 1\n    y = 2\n");
  assert.deepEqual(indent(moved.text, 4, moved.end, true).text, two);
  assert.equal(indent("  z", 2, 2, true).text, "z");
});

test("a new visitor sees the starter file; what they type is kept for that exercise only", () => {
  const store = storage();
  assert.equal(storedCode(store, "read", "stub"), "stub");
  store.setItem("gdn.practice.code.read", "mine");
  assert.equal(storedCode(store, "read", "stub"), "mine");
  assert.equal(storedCode(store, "gates", "other"), "other");
});

test("Run and Ctrl+Enter send the code; a disabled judge sends nothing; the code is kept in the browser", () => {
  const { window, host, sent, draw } = tab();
  draw(data("read"));
  const area = host.querySelector("textarea");
  assert.equal(area.value, "def read():\n    pass\n");
  area.value = "def read(S, q):\n    return S\n";
  host.querySelector(".gdn-editor-run").dispatchEvent(new window.Event("click"));
  assert.equal(sent.length, 1);
  assert.equal(sent[0][0], "run");
  assert.equal(sent[0][1].code, area.value);
  assert.equal(window.localStorage.getItem("gdn.practice.code.read"), area.value);
  const enter = new window.Event("keydown", { bubbles: true, cancelable: true });
  Object.assign(enter, { key: "Enter", ctrlKey: true });
  area.dispatchEvent(enter);
  assert.equal(sent.length, 2);
  assert.ok(enter.defaultPrevented);
  draw(data("read", { disabled: true }));
  host.querySelector(".gdn-editor-run").dispatchEvent(new window.Event("click"));
  assert.equal(sent.length, 2);
  assert.ok(host.querySelector(".gdn-editor-run").disabled);
});

test("a rerun of the same exercise keeps the textarea; another exercise opens its own code", () => {
  const { host, draw } = tab();
  draw(data("read"));
  const area = host.querySelector("textarea");
  area.value = "typed but not saved yet";
  draw(data("read"));
  assert.equal(host.querySelector("textarea"), area);
  assert.equal(area.value, "typed but not saved yet");
  draw(data("gates"));
  assert.equal(host.querySelector("textarea").value, "def gates():\n    pass\n");
  assert.equal(host.querySelectorAll("textarea").length, 1);
});

test("Tab indents inside the editor and the line numbers follow the lines", () => {
  const { window, host, draw } = tab();
  draw(data("read"));
  const area = host.querySelector("textarea");
  area.value = "a\nb";
  // linkedom's textarea has no selection: the browser's, as far as the editor uses it
  area.setSelectionRange = function (start, end) { this.selectionStart = start; this.selectionEnd = end; };
  area.setSelectionRange(0, 3);
  const press = new window.Event("keydown", { bubbles: true, cancelable: true });
  Object.assign(press, { key: "Tab" });
  area.dispatchEvent(press);
  assert.equal(area.value, "    a\n    b");
  assert.deepEqual([area.selectionStart, area.selectionEnd], [4, 11]);
  assert.equal(host.querySelector(".gdn-editor-gutter").textContent, "1\n2");
});

test("start over puts the starter file back and keeps what was there beside it", () => {
  const { window, host, draw } = tab();
  draw(data("read"));
  const area = host.querySelector("textarea");
  area.value = "my attempt";
  host.querySelector(".gdn-editor-reset").dispatchEvent(new window.Event("click"));
  assert.equal(area.value, "def read():\n    pass\n");
  assert.equal(window.localStorage.getItem("gdn.practice.code.read.before_reset"), "my attempt");
});
