// assets/player/player.js: stepping (buttons, keys, ends), the address it writes, the handshake with
// Python's seq, follow-me, and what it tells Python.
import test from "node:test";
import assert from "node:assert/strict";

import { component, fakeTab, packed, until } from "../common/fake_tab.mjs";

const STAGES = ["decay", "write"];
const FRAMES = [0, 1, 2, 3].map((i) => ({ head: `h${i}`, narration: `n${i}`, html: `<b>f${i}</b>` }));
const GZ = packed({ frames: FRAMES, fixed: '<span data-token="0"></span><span data-token="1"></span>', sides: {} });

const data = (extra = {}) => ({
  id: "memory", seq: 1, position: 2, tokens: 2, stages: STAGES, stageLabels: ["Decay", "Write"],
  labels: { reset: "Reset", prev: "Back", next: "Next", play: "Play", pause: "Pause", stepOf: "{n}/{N}",
            token: "Token", stage: "Stage" },
  params: { t: "memory_t", stage: "memory_stage" }, opening: { t: 1, stage: "write" }, lecture: false,
  playMs: 1000, hash: "frames-1", gz: GZ, ...extra,
});

async function mounted(body = "") {
  const tab = fakeTab("http://app.test/memory_table?lang=en", `<div id="host"></div>${body}`);
  const mod = await component("player/player.js", { css: "PLAYER_CSS", expose: ["tab", "connectRelay", "followTo", "payloadOf"] });
  const host = document.getElementById("host");
  const mount = (d) => mod.default({ data: d, parentElement: host });
  const shown = () => host.querySelector(".gdn-player-figure").textContent;
  mount(data());
  await until(() => shown() === "f2");
  return { tab, mod, host, mount, shown, query: () => new URL(window.location.href).searchParams };
}

test("keys step, stop at the ends and jump; each step is drawn at once and written to the address", async () => {
  const { tab, host, shown, query } = await mounted();
  assert.equal(host.querySelector(".gdn-counter").textContent, "3/4");
  tab.key("ArrowRight");
  assert.equal(shown(), "f3");
  assert.equal(query().get("memory_t"), "2");
  assert.equal(query().get("memory_stage"), "write");
  assert.equal(host.querySelector(".gdn-next").disabled, true);
  tab.key("PageDown");                                        // at the end: stays
  assert.equal(shown(), "f3");
  tab.key("Home");
  assert.equal(shown(), "f0");
  assert.equal(query().get("memory_t"), "1");                 // token 1, the first stage: the stage left out
  assert.equal(query().has("memory_stage"), false);
  tab.key("ArrowRight");                                      // the opening frame (token 1, write): no params
  assert.equal(shown(), "f1");
  assert.equal(query().has("memory_t") || query().has("memory_stage"), false);
  assert.equal(query().get("lang"), "en");
  tab.key("End");
  assert.equal(shown(), "f3");
  tab.key("PageUp");
  assert.equal(shown(), "f2");
});

test("the buttons, the stage picker and the timeline's tokens move it too", async () => {
  const { host, shown } = await mounted();
  const click = (sel) => host.querySelector(sel).dispatchEvent(new window.Event("click", { bubbles: true }));
  click(".gdn-prev");
  assert.equal(shown(), "f1");
  click(".gdn-reset");
  assert.equal(shown(), "f0");
  assert.equal(host.querySelector(".gdn-prev").disabled, true);
  click('.gdn-stage[data-stage="write"]');
  assert.equal(shown(), "f1");
  click('.gdn-player-fixed [data-token="1"]');               // token 2 at the same stage
  assert.equal(shown(), "f3");
  assert.ok(host.querySelector('.gdn-player-fixed [data-token="1"]').classList.contains("gdn-now"));
});

test("keys are left alone while typing, with a modifier, or when no player is on the page", async () => {
  const { tab, shown } = await mounted('<input id="prompt" type="text"><input id="check" type="checkbox">');
  const focus = (node) => Object.defineProperty(document, "activeElement", { value: node, configurable: true });
  focus(document.getElementById("prompt"));
  assert.equal(tab.key("ArrowRight").defaultPrevented, false);
  assert.equal(shown(), "f2");
  focus(document.getElementById("check"));                    // a checkbox is no text field
  assert.equal(tab.key("ArrowRight").defaultPrevented, true);
  assert.equal(shown(), "f3");
  focus(document.body);
  const ctrl = new window.Event("keydown", { bubbles: true, cancelable: true });
  Object.assign(ctrl, { key: "Home", ctrlKey: true });
  window.dispatchEvent(ctrl);
  assert.equal(shown(), "f3");
  document.getElementById("host").remove();
  assert.equal(tab.key("Home").defaultPrevented, false);
});

test("Space plays and pauses", async () => {
  const { tab, host } = await mounted();
  tab.key(" ");
  const play = host.querySelector(".gdn-play");
  assert.ok(host.querySelector(".gdn-player").classList.contains("playing"));
  assert.equal(play.getAttribute("aria-label"), "Pause");
  tab.key(" ");
  assert.ok(!host.querySelector(".gdn-player").classList.contains("playing"));
  assert.equal(play.getAttribute("aria-label"), "Play");
});

test("a rerun keeps the tab's position; a new seq takes Python's", async () => {
  const { tab, host, mount, shown } = await mounted();
  // each mount words the counter anew, so the counter says when the mount has drawn
  const counted = (stepOf) => ({ ...data().labels, stepOf });
  const counter = () => host.querySelector(".gdn-counter").textContent;
  tab.key("ArrowLeft");
  mount(data({ position: 3, labels: counted("{n} of {N}") }));          // the same seq: Python's copy is behind
  await until(() => counter().includes("of"));
  assert.equal(shown(), "f1");
  mount(data({ seq: 2, position: 3, gz: undefined, labels: counted("{n} / {N}") }));   // Python moved it (hash alone)
  await until(() => counter().includes(" / "));
  assert.equal(shown(), "f3");
});

test("it tells Python its position only on a flush, and follows the teacher", async () => {
  const { tab, mod, shown } = await mounted('<button id="share">Share</button>');
  const sent = [];
  mod.connectRelay((batch) => sent.push(batch), () => {});
  tab.key("ArrowLeft");
  assert.deepEqual(sent, []);                                 // stepping sends nothing
  tab.press(document.getElementById("share"));
  assert.deepEqual(sent[0].messages, [{ kind: "position", id: "memory", t: 1, stage: "write" }]);
  mod.followTo({ seq: "s1", params: { memory_t: "2" } });     // naming the token: the first stage
  assert.equal(shown(), "f2");
  mod.followTo({ seq: "s2", params: {} });                    // naming neither: the opening frame
  assert.equal(shown(), "f1");
});

test("a player remounted by its hash alone keeps its payload first in line while other payloads arrive", async () => {
  const { mod, mount, shown } = await mounted();
  const kept = () => [...mod.tab().payloads.keys()];
  for (let run = 0; run < 200; run++) {
    mod.payloadOf(`other${run}`, "gz");                        // what other views were sent in that run
    mount(data({ gz: undefined }));                            // this player again: its hash alone
  }
  assert.equal(shown(), "f2");
  assert.ok(kept().includes("frames-1"), "the shown payload was dropped");
});

test("keys after a clicked stage move the focus to the stage shown, so one stage looks chosen", async () => {
  const { tab, host } = await mounted();
  const stage = (name) => host.querySelector(`.gdn-stage[data-stage="${name}"]`);
  let focused = null;
  Object.defineProperty(document, "activeElement", { get: () => focused, configurable: true });
  for (const b of host.querySelectorAll(".gdn-stage")) b.focus = () => { focused = b; };
  stage("decay").dispatchEvent(new window.Event("click", { bubbles: true }));
  focused = stage("decay");                                  // a click focuses the button it hits
  tab.key("ArrowRight");
  assert.equal(stage("write").getAttribute("aria-pressed"), "true");
  assert.equal(focused, stage("write"));
  focused = document.body;                                   // the focus elsewhere: the keys leave it there
  tab.key("ArrowLeft");
  assert.equal(focused, document.body);
  Object.defineProperty(document, "activeElement", { value: document.body, configurable: true });
});
