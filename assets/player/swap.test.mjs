// assets/player/swap.js: every swapper of one param shows the pick, each option's HTML comes from its own
// payload (sent once per tab, then by hash), the address leaves the fallback out, Python hears the pick on a
// click outside (never on a page link), and a new seq from Python wins.
import test from "node:test";
import assert from "node:assert/strict";

import { component, fakeTab, packed, until } from "../common/fake_tab.mjs";

const LAYERS = ["0", "2", "5"];
const option = (v, { gz = true, name = "gates" } = {}) => ({
  value: v, label: v, hash: `${name}-${v}`, ...(gz ? { gz: packed(`<p class="${name}">${name} ${v}</p>`) } : {}),
});
const data = (name, extra = {}, gz = true) => ({
  id: `real_model_layer_${name}`, param: "real_model_layer", seq: 1, value: "0", fallback: "0",
  options: LAYERS.map((v) => option(v, { gz, name })), label: name === "gates" ? "Layer" : "", ...extra,
});

async function mounted() {
  const tab = fakeTab("http://app.test/real_model?lang=en",
    '<div id="g"></div><div id="o"></div><button id="share">Share</button>'
    + '<a data-testid="stTopNavLink" href="/compare" id="nav">Compare</a>');
  const mod = await component("player/swap.js", { expose: ["tab", "connectRelay"] });
  const mount = (d) => mod.default({ data: d, parentElement: document.getElementById(d.id.endsWith("gates") ? "g" : "o") });
  const text = (id) => document.querySelector(`#${id} .gdn-swap-body`)?.textContent;
  mount(data("gates"));
  mount(data("overview"));
  await until(() => text("g") === "gates 0" && text("o") === "overview 0");
  const pick = (v) => document.querySelector(`#g .gdn-swap-btn[data-value="${v}"]`)
    .dispatchEvent(new window.Event("click", { bubbles: true }));
  return { tab, mod, mount, text, pick, query: () => new URL(window.location.href).searchParams };
}

test("a pick shows that option in every swapper of the param at once, and the address names it", async () => {
  const { text, pick, query } = await mounted();
  assert.equal(document.querySelector("#o .gdn-swap-bar").hidden, true);         // one bar: the gates'
  pick("5");
  assert.equal(text("g"), "gates 5");
  assert.equal(text("o"), "overview 5");
  assert.equal(query().get("real_model_layer"), "5");
  assert.equal(document.querySelector('#g .gdn-swap-btn[data-value="5"]').getAttribute("aria-pressed"), "true");
  pick("0");                                                                     // the fallback: left out
  assert.equal(query().has("real_model_layer"), false);
  assert.equal(query().get("lang"), "en");
});

test("each option is its own payload: a later run sends the hashes alone and the tab keeps the HTML", async () => {
  const { mod, mount, text, pick } = await mounted();
  assert.deepEqual([...mod.tab().payloads.keys()].sort(),
                   ["gates-0", "gates-2", "gates-5", "overview-0", "overview-2", "overview-5"]);
  pick("2");
  const counter = () => document.querySelector("#g .gdn-swap-name").textContent;
  mount(data("gates", { label: "Layer again" }, false));                       // hashes only
  mount(data("overview", {}, false));
  await until(() => counter() === "Layer again");
  assert.equal(text("g"), "gates 2");                                            // the tab's pick stays
  pick("5");
  assert.equal(text("o"), "overview 5");
});

test("a payload the tab lacks is asked for, and nothing stale is shown meanwhile", async () => {
  const { mod, mount, text } = await mounted();
  const asked = [];
  mod.connectRelay(() => {}, (hash) => asked.push(hash));
  const other = data("gates", { options: [option("7", { gz: false, name: "other" })], value: "7", seq: 2 });
  mount(other);
  await until(() => asked.length > 0);
  assert.deepEqual(asked, ["other-7"]);
  assert.equal(text("g"), "");
});

test("Python hears the pick on a click outside, not on a page link; a new seq from Python wins", async () => {
  const { tab, mod, mount, text, pick } = await mounted();
  const sent = [];
  mod.connectRelay((batch) => sent.push(batch), () => {});
  pick("2");
  tab.press(document.getElementById("nav"));                                     // would race the page switch
  assert.deepEqual(sent, []);
  tab.press(document.getElementById("share"));
  assert.deepEqual(sent.map((b) => b.messages), [[{ kind: "pick", id: "real_model_layer", value: "2" }]]);
  mount(data("gates", { seq: 2, value: "5", label: "Story" }, false));           // a story button set layer 5
  await until(() => document.querySelector("#g .gdn-swap-name").textContent === "Story");
  assert.equal(text("g"), "gates 5");
});

test("another trace's options under the same values are painted anew, on the layer the tab shows", async () => {
  const { mount, text, pick } = await mounted();
  pick("2");
  const next = (v) => ({ value: v, label: v, hash: `new-${v}`, gz: packed(`<p>new prompt ${v}</p>`) });
  mount(data("gates", { options: LAYERS.map(next) }));
  await until(() => text("g") === "new prompt 2");
});
