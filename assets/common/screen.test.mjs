// assets/common/screen.js: lecture mode's scale, how many times 1280x720 fits the screen, reported to Python
// when it differs from the scale Python drew at, again after a resize, and kept in a cookie.
import test from "node:test";
import assert from "node:assert/strict";
import { fakeTab } from "./fake_tab.mjs";
import follow, { scaleOf } from "./screen.js";

test("the scale of a screen: 1280x720 fits 1.5 times in 1920x1080, in eighths rounded down, from 1 to 3", () => {
  assert.equal(scaleOf(1280, 720), 1);
  assert.equal(scaleOf(1920, 1080), 1.5);
  assert.equal(scaleOf(2560, 1440), 2);
  assert.equal(scaleOf(1920, 1200), 1.5);            // 16:10: the width decides
  assert.equal(scaleOf(2560, 1080), 1.5);            // ultra-wide: the height decides
  assert.equal(scaleOf(1366, 768), 1);               // 1.067: an eighth not reached
  assert.equal(scaleOf(1024, 600), 1);               // smaller than 1280x720: its sizes, never smaller
  assert.equal(scaleOf(7680, 4320), 3);
  assert.equal(scaleOf(0, 0), 1);
});

// Resolves once check() is true, polled every 20 ms (the report waits for the resize to settle), or fails after 2 s.
async function soon(check) {
  for (let waited = 0; waited < 2000; waited += 20) {
    if (check()) return;
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`never true: ${check}`);
}

function tab(width, height) {
  const made = fakeTab("http://app.test/cost?lang=en&mode=lecture");
  Object.assign(made.window, { innerWidth: width, innerHeight: height });
  let jar = "";
  Object.defineProperty(made.document, "cookie", { configurable: true, get: () => jar, set: (c) => { jar = c; } });
  const sent = [];
  const mount = (drawn) => follow({ data: { drawn }, setStateValue: (key, value) => sent.push([key, value]) });
  return { ...made, sent, mount, root: made.document.documentElement };
}

test("a 1920x1080 screen where Python drew at 1: reports 1.5 once, keeps it in the cookie; drawn at 1.5, quiet", () => {
  const { sent, mount, root, document } = tab(1920, 1080);
  mount(1);
  assert.deepEqual(sent, [["scale", 1.5]]);
  assert.equal(root.dataset.gdnScaleDrawn, "1");
  assert.equal(root.dataset.gdnScaleWant, "1.5");
  assert.match(document.cookie, /^gdn_scale=1\.5; path=\/;/);
  mount(1.5);                                       // the rerun Python drew at 1.5
  assert.deepEqual(sent, [["scale", 1.5]]);
  assert.equal(root.dataset.gdnScaleDrawn, root.dataset.gdnScaleWant);
});

test("a resize reports the new scale once it stops; unmounted (lecture mode off), nothing is said or awaited", async () => {
  const { window, sent, mount, root } = tab(1920, 1080);
  const cleanup = mount(1.5);
  assert.deepEqual(sent, []);
  Object.assign(window, { innerWidth: 1280, innerHeight: 720 });
  window.dispatchEvent(new window.Event("resize"));
  assert.equal(root.dataset.gdnScaleWant, "1");     // at once: a test waits for Python to catch up
  await soon(() => sent.length === 1);
  assert.deepEqual(sent, [["scale", 1]]);
  cleanup();
  assert.equal(root.dataset.gdnScaleWant, undefined);
  assert.equal(root.dataset.gdnScaleDrawn, undefined);
  Object.assign(window, { innerWidth: 2560, innerHeight: 1440 });
  window.dispatchEvent(new window.Event("resize"));
  await new Promise((done) => setTimeout(done, 400));   // past the resize's settling time: still nothing sent
  assert.deepEqual(sent, [["scale", 1]]);
});
