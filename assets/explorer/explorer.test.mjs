// assets/explorer/explorer.js: the grid lookup (the sliders' indices name the frame Python drew there), the
// address it writes (defaults left out), the handshake, the linked hovers, and what it tells Python.
import test from "node:test";
import assert from "node:assert/strict";

import { component, fakeTab, packed, until } from "../common/fake_tab.mjs";

const T = ["2", "3", "4"], SEEDS = ["0", "1"];
const FRAMES = Object.fromEntries(T.flatMap((_, i) => SEEDS.map((_, j) => [`${i},${j}`,
  `<p class="f">T=${T[i]} seed=${SEEDS[j]}</p><i data-link="k${i}">a</i><i data-link="k${i}">b</i><i data-link="x">c</i>`])));
const data = (extra = {}) => ({
  id: "start_attention", seq: 1, index: [1, 0],
  controls: [{ key: "start_T", label: "T", values: T, labels: T.map((t) => `T = ${t}`), default: "3", play: true },
             { key: "start_seed", label: "example", values: SEEDS, labels: ["A", "B"], default: "0", play: false }],
  labels: { play: "Play", pause: "Pause" }, alt: "attention", below: false, lecture: false, playMs: 900,
  hash: "grid-1", gz: packed(FRAMES), download: null, ...extra,
});

async function mounted(body = "") {
  const tab = fakeTab("http://app.test/start?lang=zh", `<div id="host"></div>${body}`);
  const mod = await component("explorer/explorer.js", { css: "EXPLORER_CSS",
                                                        expose: ["pointName", "valuesAt", "addressOf", "connectRelay"] });
  const host = document.getElementById("host");
  const mount = (d) => mod.default({ data: d, parentElement: host, setTriggerValue: () => {} });
  const shown = () => host.querySelector(".gdn-explorer-figure .f")?.textContent;
  mount(data());
  await until(() => shown() === "T=3 seed=0");
  const slide = (i, to) => {
    const input = host.querySelectorAll(".gdn-explorer-slider")[i];
    input.value = String(to);
    input.dispatchEvent(new window.Event("input", { bubbles: true }));
  };
  return { tab, mod, host, mount, shown, slide, query: () => new URL(window.location.href).searchParams };
}

test("the grid lookup: a point is named by its option indices, first control slowest, as pack_grid names it", async () => {
  const { mod } = await mounted();
  const { controls } = data();
  assert.equal(mod.pointName([2, 1]), "2,1");
  assert.deepEqual(mod.valuesAt(controls, [2, 1]), { start_T: "4", start_seed: "1" });
  assert.deepEqual(mod.addressOf(controls, [1, 1]), { start_T: null, start_seed: "1" });   // T at its default
});

test("a slider shows the frame of its grid point at once and writes the address without defaults", async () => {
  const { host, shown, slide, query } = await mounted();
  slide(0, 2);
  assert.equal(shown(), "T=4 seed=0");
  assert.equal(query().get("start_T"), "4");
  assert.equal(query().has("start_seed"), false);
  slide(1, 1);
  assert.equal(shown(), "T=4 seed=1");
  assert.equal(query().get("start_seed"), "1");
  assert.equal(host.querySelectorAll(".gdn-explorer-value")[0].textContent, "T = 4");
  slide(0, 1);
  assert.equal(query().has("start_T"), false);
  assert.equal(query().get("lang"), "zh");
});

test("a rerun keeps the tab's values; a new seq or another grid takes Python's", async () => {
  const { host, mount, shown, slide } = await mounted();
  const drawn = (alt) => host.querySelector(".gdn-explorer-figure").getAttribute("aria-label") === alt;
  slide(0, 0);
  mount(data({ index: [2, 1], alt: "rerun" }));               // the same seq: the tab is ahead
  await until(() => drawn("rerun"));
  assert.equal(shown(), "T=2 seed=0");
  mount(data({ seq: 2, index: [2, 1], gz: undefined, alt: "moved" }));   // Python moved them; the hash alone
  await until(() => drawn("moved"));
  assert.equal(shown(), "T=4 seed=1");
});

test("pointing at a linked element lights every element with its mark, and the light follows a move", async () => {
  const { host, slide } = await mounted();
  const figure = host.querySelector(".gdn-explorer-figure");
  figure.querySelector('[data-link="x"]').dispatchEvent(new window.Event("pointerover", { bubbles: true }));
  const lit = () => [...figure.querySelectorAll(".gdn-lit")].map((n) => n.dataset.link);
  assert.deepEqual(lit(), ["x"]);
  slide(0, 2);                                                 // the new frame has an "x" too: still lit
  assert.deepEqual(lit(), ["x"]);
  figure.querySelector('[data-link="k2"]').dispatchEvent(new window.Event("pointerover", { bubbles: true }));
  assert.deepEqual(lit(), ["k2", "k2"]);
  figure.dispatchEvent(new window.Event("pointerleave"));
  assert.deepEqual(lit(), []);
});

test("its values go to Python on a click outside, not on a move", async () => {
  const { tab, mod, slide } = await mounted('<button id="share">Share</button>');
  const sent = [];
  mod.connectRelay((batch) => sent.push(batch), () => {});
  slide(1, 1);
  assert.deepEqual(sent, []);
  tab.press(document.getElementById("share"));
  assert.deepEqual(sent[0].messages, [{ kind: "values", id: "start_attention", values: { start_T: "3", start_seed: "1" } }]);
});
