// Test helper for the unit tests of the browser code (not a test itself): a browser tab made of linkedom's
// document (pinned in package.json) with an address bar and its history, and a component's module assembled
// as app_pages/_support/pack.py's component_js assembles it (the shared files of SHARED, a stylesheet
// constant, the component's own file), with some of its inner functions exported so a test can call them.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

import { parseHTML } from "linkedom";

const ASSETS = new URL("../", import.meta.url);
const DIR = mkdtempSync(join(tmpdir(), "gdn-assets-"));
let made = 0;

// What component_js puts in front of every component, in its order (pack.py's SHARED_JS; test_js_units
// checks that the two lists and eslint.config.mjs's agree).
export const SHARED = ["common/view.js", "common/keys.js", "common/hover.js", "common/pack.js"];

// A fresh tab at `href`: globalThis.window / document / CSS set, history.replaceState recorded in `replaced`.
export function fakeTab(href = "http://app.test/memory_table?lang=en", body = "") {
  const { window, document } = parseHTML(`<!doctype html><html><head></head><body>${body}</body></html>`);
  // linkedom's window writes through to globalThis: a new tab starts without the last one's gdn state
  for (const name of Object.keys(globalThis)) if (/^_*gdn/.test(name)) delete globalThis[name];
  const replaced = [];
  const location = { href, get search() { return new URL(this.href).search; } };
  Object.defineProperty(window, "location", { value: location, configurable: true });
  Object.defineProperty(window, "history", { configurable: true, value: {
    state: { page: 1 },
    replaceState(state, _title, url) { replaced.push({ state, url }); location.href = url; },
  } });
  window.matchMedia = () => ({ matches: true });          // reduced motion: no fly animation to wait for
  globalThis.window = window;
  globalThis.document = document;
  globalThis.CSS = { escape: (s) => String(s).replace(/["\\]/g, "\\$&") };
  return { window, document, replaced, press, key };
}

// A pointer press on `node` (bubbling, so capture listeners on the document see it) and a key press.
function press(node) {
  node.dispatchEvent(new window.Event("pointerdown", { bubbles: true }));
}

function key(name, target = window) {
  const event = new window.Event("keydown", { bubbles: true, cancelable: true });
  event.key = name;
  target.dispatchEvent(event);
  return event;
}

// The component `path` (under assets/; null: the shared files alone) as one module: its default export,
// and the `expose`d inner names.
export async function component(path, { css = null, expose = [] } = {}) {
  const read = (p) => readFileSync(new URL(p, ASSETS), "utf8");
  const parts = SHARED.map(read);
  if (css) parts.push(`const ${css} = "";`);
  if (path) parts.push(read(path));
  parts.push(`export { ${expose.join(", ")} };`);
  const file = join(DIR, `module${made++}.mjs`);
  writeFileSync(file, parts.join("\n"));
  return import(file);
}

// A payload as pack.py's pack_json packs it: base64 of gzip of JSON.
export const packed = (payload) => gzipSync(Buffer.from(JSON.stringify(payload))).toString("base64");

// Resolves once check() is true (a mount unpacks its payload asynchronously), failing after `turns` turns
// of the event loop.
export async function until(check, turns = 1000) {
  for (let i = 0; i < turns; i++) {
    if (check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never true: ${check}`);
}
