// assets/common/skip_link.js: Streamlit's "Skip to main content" link is named in the page's language, again
// whenever Streamlit draws it anew, by one observer per tab.
import test from "node:test";
import assert from "node:assert/strict";
import { fakeTab, until } from "./fake_tab.mjs";
import nameLink from "./skip_link.js";

const run = (label) => nameLink({ data: { label } });   // the component's mount, as browser.py gives it
const LINK = '<a data-testid="stSkipToContent" href="#main">Skip to main content</a>';

test("names the link at once and again when Streamlit redraws it, with one observer per tab", async () => {
  const { window } = fakeTab("http://app.test/start?lang=zh", `<div id="app">${LINK}</div>`);
  globalThis.MutationObserver = window.MutationObserver;
  run("跳到正文");
  const link = () => document.querySelector('[data-testid="stSkipToContent"]');
  assert.equal(link().textContent, "跳到正文");
  const observer = window.gdnSkipLink;
  run("跳到正文");                                   // the next run's mount: no second observer
  assert.equal(window.gdnSkipLink, observer);
  document.getElementById("app").innerHTML = LINK;  // Streamlit draws it anew, in English
  await until(() => link().textContent === "跳到正文");
});

test("no label yet: the link is left as Streamlit drew it", () => {
  const { window } = fakeTab("http://app.test/start", LINK);
  globalThis.MutationObserver = window.MutationObserver;
  run(undefined);
  assert.equal(document.querySelector('[data-testid="stSkipToContent"]').textContent, "Skip to main content");
});
