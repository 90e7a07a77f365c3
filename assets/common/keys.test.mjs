// assets/common/keys.js: the one "is the learner typing" rule, the one keydown listener and its handlers'
// order, and the tab's one global (window.__gdnView) that the keys and the room's clicker share.
import test from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";

import { component, fakeTab, packed, until } from "./fake_tab.mjs";

const FIELDS = '<input id="text"><input id="search" type="search"><input id="email" type="EMAIL">'
  + '<input id="box" type="checkbox"><input id="radio" type="radio"><input id="range" type="range">'
  + '<input id="submit" type="submit"><textarea id="area"></textarea><select id="pick"><option>a</option></select>'
  + '<div contenteditable="true"><b id="edited">x</b></div><div contenteditable="false"><b id="fixed">x</b></div>'
  + '<div role="grid" id="grid"><div role="row"><div role="gridcell"><span id="cell">3</span></div></div>'
  + '<canvas id="canvas"></canvas></div><button id="button">go</button><div role="combobox"><input id="combo"></div>'
  + '<ul role="listbox"><li role="option" id="option">q1</li></ul><p id="text-of-page">read</p>';

test("typing: text fields, text areas, drop-downs, editable text, list boxes and the token editor's grid", async () => {
  fakeTab("http://app.test/tokens", FIELDS);
  const { typing } = await component(null, { expose: ["typing"] });
  const typed = (id) => typing(document.getElementById(id));
  for (const id of ["text", "search", "email", "area", "pick", "edited", "grid", "cell", "canvas", "combo", "option"]) {
    assert.equal(typed(id), true, id);
  }
  for (const id of ["box", "radio", "range", "submit", "fixed", "button", "text-of-page"]) assert.equal(typed(id), false, id);
  assert.equal(typing(document.body), false);
  assert.equal(typing(null), false);
  assert.equal(typing(window), false);                         // a key pressed with nothing focused
});

test("one listener; handlers asked in rank order, the first that takes the key ends it; a name is replaced", async () => {
  const tab = fakeTab("http://app.test/memory_table", FIELDS);
  const added = [];
  const add = window.addEventListener.bind(window);
  window.addEventListener = (type, ...rest) => { added.push(type); add(type, ...rest); };
  const { onKeys, offKeys } = await component(null, { expose: ["onKeys", "offKeys"] });
  const asked = [];
  const handler = (name, takes) => (event, { typing }) => { asked.push([name, event.key, typing]); return takes(event); };
  onKeys("player", handler("player", () => true));
  onKeys("clicker", handler("clicker", (e) => e.key === "PageDown"));
  onKeys("flush", handler("flush", () => false));
  assert.deepEqual(added, ["keydown"]);                         // one listener, however many handlers
  assert.equal(tab.key("PageDown").defaultPrevented, true);
  assert.deepEqual(asked, [["flush", "PageDown", false], ["clicker", "PageDown", false]]);
  asked.length = 0;
  assert.equal(tab.key("ArrowRight", document.getElementById("area")).defaultPrevented, true);
  assert.deepEqual(asked.map(([n, , typing]) => [n, typing]), [["flush", true], ["clicker", true], ["player", true]]);
  onKeys("player", handler("new player", () => false));          // drawn again: replaces its own
  offKeys("clicker");
  asked.length = 0;
  assert.equal(tab.key("End").defaultPrevented, false);         // nobody took it: the page's
  assert.deepEqual(asked.map(([n]) => n), ["flush", "new player"]);
  assert.throws(() => onKeys("scroller", () => true), /no key handler named scroller: name one of flush,hush/);
});

const STAGES = ["decay", "write"];
const PLAYER = {
  id: "memory", seq: 1, position: 0, tokens: 2, stages: STAGES, stageLabels: ["Decay", "Write"],
  labels: { reset: "Reset", prev: "Back", next: "Next", play: "Play", pause: "Pause", stepOf: "{n}/{N}",
            token: "Token", stage: "Stage" },
  params: { t: "memory_t", stage: "memory_stage" }, opening: null, lecture: false, playMs: 1000, hash: "frames-1",
  gz: packed({ frames: [0, 1, 2, 3].map((i) => ({ head: "", narration: "", html: `f${i}` })), fixed: "", sides: {} }),
};

test("a room with a player demo: the clicker takes PageDown first; one global for every component of the tab", async () => {
  const tab = fakeTab("http://app.test/classroom?lang=en", '<div id="host"></div>');
  const host = document.getElementById("host");
  const player = (await component("player/player.js", { css: "PLAYER_CSS" })).default;
  const clicker = (await component("live/clicker.js")).default;
  const relay = (await component("common/relay.js")).default;
  const lead = (await component("follow/lead.js")).default;
  player({ data: PLAYER, parentElement: host });
  const shown = () => host.querySelector(".gdn-player-figure").textContent;
  await until(() => shown() === "f0");
  const sent = [];
  const unmount = clicker({ data: { round: 1 }, setTriggerValue: (_, value) => sent.push(value) });
  relay({ setStateValue: () => {}, setTriggerValue: () => {} });
  const stopLead = lead({ data: { page: "classroom", own: ["lang"], settleMs: 120 }, setStateValue: () => {} });
  tab.key("PageDown");
  assert.deepEqual([sent, shown()], [[{ go: "next", round: 1 }], "f0"]);     // the room moved, the demo did not
  unmount();
  tab.key("PageDown");
  assert.deepEqual([sent.length, shown()], [1, "f1"]);                       // no clicker: the player's key
  stopLead();
  const globals = Object.keys(globalThis).filter((name) => /gdn/i.test(name));
  assert.deepEqual(globals, ["__gdnView"]);
  assert.deepEqual([...window.__gdnView.keys.keys()].sort(), ["flush", "hush", "player"]);
});

test("the code: one keydown listener on the page, one pointerover linker, one window global", () => {
  const root = new URL("../", import.meta.url);
  const files = readdirSync(root, { recursive: true }).filter((f) => f.endsWith(".js")).sort();
  const where = (pattern) => files.filter((f) => pattern.test(readFileSync(new URL(f, root), "utf8")));
  assert.deepEqual(where(/(?:window|document)\.addEventListener\(\s*"keydown"/), ["common/keys.js"]);
  assert.deepEqual(where(/addEventListener\(\s*"pointerover"/), ["common/hover.js"]);
  const globals = new Set(files.flatMap((f) => [...readFileSync(new URL(f, root), "utf8").matchAll(/window\.(__\w+)/g)]
    .map((m) => m[1])));
  assert.deepEqual([...globals], ["__gdnView"]);
});
