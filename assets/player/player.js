// The frame player (app_pages/_support/player.py): draws frames that Python computed, and steps, plays,
// scrubs and highlights them in the browser, so a key press paints in one animation frame and sends
// nothing to the server. Python stays the truth for every number: this file never computes one, it only
// swaps HTML it was sent. The position goes into the address bar at once (reload and copied links reopen
// it) and to Python only when Python needs it (view.js's flush), never once per key press. The address,
// the handshake with Python, the payload sent once and the relay are assets/common/view.js's: a player
// is a view of kind "position", its message {t, stage, variant?}.
//
// Payload (data): id, seq (bumped when Python moves the position on purpose), position, tokens, stages,
// stageLabels, labels {reset, prev, next, play, pause, stepOf, token, stage}, params {t, stage},
// opening {t, stage} (the frame a link without a position opens; the address leaves it out),
// lecture, playMs, hash, gz (base64 gzip of JSON {frames: [{head, narration, html, side?, fly?}],
// fixed, sides {stage: html}}; left out when this tab was already sent it: payloadOf in view.js keeps it).
export default function ({ data, parentElement }) {
  addStyle("gdn-player-css", PLAYER_CSS);   // PLAYER_CSS: assets/player/player.css, prepended by player.py
  installKeys();
  const player = tab().views.get(`position:${data.id}`) ?? newPlayer(data.id);
  player.data = data;
  if (player.host !== parentElement || !player.root?.isConnected) build(player, parentElement);
  useVariant(player);                                    // several payloads (compare's variants): pick one
  relabel(player);
  load(player).then(() => {
    if (pythonMoved(player, data.seq)) player.index = data.position;   // a new mount, or Python moved it on purpose
    show(player, player.index);
    applyFollow();
  });
  return () => stopPlaying(player);
}

function newPlayer(id) {
  const player = { kind: "position", id, index: 0, seq: null, hash: null, frames: [], sides: {}, timer: null,
                   moved: false, touched: 0 };
  player.message = () => ({ t: tokenOf(player) + 1, stage: player.data.stages[stageOf(player)],
                            ...(player.variant ? { variant: player.variant } : {}) });
  player.ready = () => player.frames.length > 0;
  player.follow = (params) => follow(player, params);
  return register(player);
}

// ---- the payload --------------------------------------------------------------------------------

function load(player) {
  return loadPayload(player, {                           // pack.js: sent once per tab, unpacked once per mount
    clear() {
      player.frames = [];
      for (const part of [player.figure, player.head, player.narration, player.side, player.fixed]) part.replaceChildren();
    },
    apply(payload) {
      player.frames = payload.frames;
      player.sides = payload.sides || {};
      player.fixed.innerHTML = payload.fixed || "";
      player.shown = -1;
      player.index = Math.min(player.index, player.frames.length - 1);
    },
  });
}

// ---- the page around the frames ------------------------------------------------------------------

function build(player, host) {
  stopPlaying(player);
  host.replaceChildren();
  const root = el("div", "gdn-player", host);
  root.addEventListener("pointerdown", () => touch(player));
  player.variantBar = el("div", "gdn-variants", root);
  const bar = el("div", "gdn-player-bar", root);
  const button = (name, onClick) => {
    const b = el("button", `gdn-btn gdn-${name}`, bar);
    b.type = "button";
    b.addEventListener("click", () => { touch(player); onClick(); });
    return b;
  };
  player.buttons = {
    reset: button("reset", () => go(player, 0)),
    prev: button("prev", () => go(player, player.index - 1)),
    next: button("next", () => go(player, player.index + 1)),
    play: button("play", () => togglePlay(player)),
  };
  player.stageGroup = el("div", "gdn-stages", bar);
  player.stageGroup.setAttribute("role", "group");
  player.counter = el("span", "gdn-counter", bar);
  player.counter.setAttribute("aria-live", "polite");
  player.head = el("div", "gdn-player-head", root);
  player.narration = el("div", "gdn-narration", root);
  const body = el("div", "gdn-player-body", root);
  player.figure = el("div", "gdn-player-figure", body);
  player.side = el("aside", "gdn-player-side", body);
  player.fixed = el("div", "gdn-player-fixed", root);
  player.fixed.addEventListener("click", (e) => {      // a token in the timeline: scrub there
    const cell = e.target.closest("[data-token]");
    if (cell) go(player, Number(cell.dataset.token) * player.data.stages.length + stageOf(player));
  });
  const scrub = el("label", "gdn-scrub", root);
  player.scrubLabel = el("span", "gdn-scrub-label", scrub);
  player.slider = el("input", "gdn-slider", scrub);
  player.slider.type = "range";
  player.slider.min = "1";
  player.slider.addEventListener("input", () => {
    go(player, (Number(player.slider.value) - 1) * player.data.stages.length + stageOf(player));
  });
  player.sliderValue = el("output", "gdn-scrub-value", scrub);
  player.story = el("div", "gdn-story", root);
  player.root = root;
  player.host = host;
  player.hash = null;                                    // the new DOM needs the fixed part again
}

function relabel(player) {
  const { labels, stages, stageLabels, tokens, lecture } = player.data;
  player.root.classList.toggle("lecture", !!lecture);
  player.root.classList.toggle("playing", !!player.timer);
  for (const [name, b] of Object.entries(player.buttons)) {
    const label = name === "play" ? (player.timer ? labels.pause : labels.play) : labels[name];
    b.textContent = lecture && name !== "play" ? "" : label;
    b.setAttribute("aria-label", label);
    b.title = label;
  }
  if (player.stageGroup.dataset.stages !== stageLabels.join("|")) {
    player.stageGroup.replaceChildren();
    stages.forEach((stage, i) => {
      const b = el("button", "gdn-stage", player.stageGroup);
      b.type = "button";
      b.textContent = stageLabels[i];
      b.dataset.stage = stage;
      b.addEventListener("click", () => go(player, tokenOf(player) * stages.length + i));
    });
    player.stageGroup.dataset.stages = stageLabels.join("|");
    player.stageGroup.setAttribute("aria-label", labels.stage);
  }
  player.scrubLabel.textContent = labels.token;
  player.slider.max = String(tokens);
  player.slider.closest("label").hidden = tokens < 2;
}

// ---- moving ------------------------------------------------------------------------------------

const tokenOf = (player) => Math.floor(player.index / player.data.stages.length);
const stageOf = (player) => player.index % player.data.stages.length;

function go(player, to) {
  if (!player.frames.length) return;
  const next = Math.max(0, Math.min(player.frames.length - 1, to));
  if (next === player.index && player.shown === next) return;
  const forward = next === player.index + 1;
  player.index = next;
  show(player, next, { forward });
  player.moved = true;                                   // told to Python by view.js's flush, when it needs it
}

function show(player, index, { forward = false } = {}) {
  const frame = player.frames[index];
  if (!frame || player.root.classList.contains("gdn-bar-only")) return;     // a server-drawn variant (see below)
  const { stages, labels } = player.data;
  const before = forward && frame.fly && !reducedMotion() ? flyStart(player, frame.fly) : null;
  if (player.shown !== index) {
    player.head.innerHTML = frame.head;
    player.narration.innerHTML = frame.narration;
    player.figure.innerHTML = frame.html;
    const stage = stages[index % stages.length];
    player.side.innerHTML = frame.side ?? player.sides[stage] ?? "";
    player.side.hidden = !player.side.innerHTML;
    player.shown = index;
  }
  const token = Math.floor(index / stages.length), stage = index % stages.length;
  for (const b of player.stageGroup.children) b.setAttribute("aria-pressed", String(b.dataset.stage === stages[stage]));
  const stepOf = touchOnly() && labels.stepOfTouch ? labels.stepOfTouch : labels.stepOf;
  player.counter.textContent = stepOf.replace("{n}", index + 1).replace("{N}", player.frames.length);
  player.slider.value = String(token + 1);
  player.sliderValue.textContent = String(token + 1);
  player.buttons.prev.disabled = player.buttons.reset.disabled = index === 0;
  player.buttons.next.disabled = index === player.frames.length - 1 && !player.timer;
  for (const cell of player.fixed.querySelectorAll("[data-token]")) {
    cell.classList.toggle("gdn-now", Number(cell.dataset.token) === token);
  }
  if (before) flyEnd(player, before, frame.fly);
  for (const strip of player.figure.querySelectorAll(".gdn-tables")) revealActive(strip);
  writePosition(player, token, stages[stage]);
}

// A phone has no keys to press, only the buttons to tap.
const touchOnly = () => window.matchMedia("(pointer: coarse)").matches;

// On a phone a row of side-by-side tables is wider than the screen and scrolls sideways on its own
// (assets/app.css): each row is scrolled so that the panels the stage is about (framed, td.active) are on
// screen, and a student following the projector never has to look for them. Where they do not fit together,
// the last one shows: the stage's result (the decayed table, the written one, the output) is its rightmost.
function revealActive(strip) {
  const width = strip.clientWidth;
  if (!width || strip.scrollWidth <= width + 1) return;
  const cells = [...strip.querySelectorAll("td.cell.active")];
  if (!cells.length) return;
  const origin = strip.getBoundingClientRect().left - strip.scrollLeft;
  const right = Math.max(...cells.map((c) => c.getBoundingClientRect().right)) - origin;
  strip.scrollLeft = Math.max(0, right + 2 - width);        // 2: the frame's outer edge
}

// ---- the address bar --------------------------------------------------------------------------------

function writePosition(player, token, stage) {
  // as short as Python reads it back (player.py, address): nothing at the opening frame, else the token
  // always and the stage unless it is the first
  const { params, stages, opening } = player.data;
  const home = !!opening && token + 1 === opening.t && stage === opening.stage;
  writeAddress({ [params.t]: home ? null : token + 1, [params.stage]: home || stage === stages[0] ? null : stage });
}

// ---- playing -------------------------------------------------------------------------------------

function togglePlay(player) {
  if (player.timer) return stopPlaying(player, true);
  if (player.index >= player.frames.length - 1) go(player, 0);
  player.timer = setInterval(() => {
    if (!player.root.isConnected || player.index >= player.frames.length - 1) return stopPlaying(player, true);
    go(player, player.index + 1);
  }, player.data.playMs);
  relabel(player);
  show(player, player.index);
}

function stopPlaying(player, redraw = false) {
  if (!player.timer) return;
  clearInterval(player.timer);
  player.timer = null;
  if (redraw && player.root?.isConnected) {
    relabel(player);
    show(player, player.index);
  }
}

// ---- the write's animation: the key and the error fly into the write panel -------------------------

const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

function flyStart(player, fly) {
  // Where the sources are now (they are on screen in the frame before the write).
  return fly.from.map(([panel, row]) => {
    const cells = [...player.figure.querySelectorAll(`td[data-panel="${panel}"][data-r="${row}"]`)];
    return cells.map((cell) => ({ rect: cell.getBoundingClientRect(), html: cell.outerHTML }));
  });
}

function flyEnd(player, sources, fly) {
  const target = [...player.figure.querySelectorAll(`td[data-panel="${fly.to}"]`)];
  if (!target.length) return;
  const box = target.map((c) => c.getBoundingClientRect())
    .reduce((a, r) => ({ left: Math.min(a.left, r.left), top: Math.min(a.top, r.top),
                         right: Math.max(a.right, r.right), bottom: Math.max(a.bottom, r.bottom) }),
            { left: Infinity, top: Infinity, right: -Infinity, bottom: -Infinity });
  const layer = el("div", "gdn-fly-layer", document.body);
  sources.flat().forEach(({ rect, html }, i) => {
    const ghost = el("table", "gdn-tables gdn-fly", layer);
    ghost.innerHTML = `<tr>${html}</tr>`;
    Object.assign(ghost.style, { left: `${rect.left}px`, top: `${rect.top}px`, width: `${rect.width}px`, height: `${rect.height}px` });
    const dx = (box.left + box.right) / 2 - (rect.left + rect.width / 2);
    const dy = (box.top + box.bottom) / 2 - (rect.top + rect.height / 2);
    ghost.animate([{ transform: "translate(0,0) scale(1)", opacity: 1 },
                   { transform: `translate(${dx}px,${dy}px) scale(0.6)`, opacity: 0.15 }],
                  { duration: 650, delay: 40 * i, easing: "cubic-bezier(.4,0,.2,1)", fill: "forwards" });
  });
  setTimeout(() => layer.remove(), 1000);
  for (const cell of player.figure.querySelectorAll("td.changed")) {
    cell.animate([{ boxShadow: "inset 0 0 0 4px #f59e0b" }, { boxShadow: "inset 0 0 0 0 #f59e0b" }],
                 { duration: 1400, delay: 500, easing: "ease-out" });
  }
}

// ---- keys ----------------------------------------------------------------------------------------

const KEYS = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1, Home: "home", End: "end", " ": "play" };

// The player the keys move: the one pressed last, else the first on the page.
function target() {
  const live = liveViews("position").filter((p) => p.frames.length);
  return live.reduce((best, p) => (p.touched > best.touched ? p : best), live[0]);
}

function touch(player) {
  player.touched = performance.now();
}

// Follow-me (view.js, followTo): read the teacher's params as player.py's position() does: naming neither
// the token nor the stage means the opening frame, naming one of them token 1 / the first stage.
function follow(player, wanted) {
  const { params, stages, opening } = player.data;
  const named = params.t in wanted || params.stage in wanted;
  const home = named || !opening ? { t: 1, stage: stages[0] } : { t: opening.t, stage: opening.stage || stages[0] };
  const stage = stages.indexOf(wanted[params.stage] ?? home.stage);
  const t = Number(wanted[params.t] ?? home.t);
  if (stage >= 0 && Number.isInteger(t) && t >= 1) go(player, (t - 1) * stages.length + stage);
}

function installKeys() {
  once("player-keys", () => {
    let dragging = false;                                // a slider held by the pointer keeps its keys
    document.addEventListener("pointerdown", (e) => { dragging = !!e.target.closest?.('[role="slider"]'); }, true);
    document.addEventListener("pointerup", () => { dragging = false; }, true);
    onKeys("player", (e, { typing }) => {                // assets/common/keys.js: taken, no page scroll
      const move = KEYS[e.key];
      if (move === undefined || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || typing || dragging) return false;
      const player = target();
      if (!player) return false;
      press(player, move);
      return true;
    });
  });
}

function press(player, move) {
  if (move === "play") togglePlay(player);
  else if (move === "home") go(player, 0);
  else if (move === "end") go(player, player.frames.length - 1);
  else go(player, player.index + move);
  // A stage button clicked before the keys keeps the focus, and the keys make its focus ring show: two
  // stages looked chosen. The focus moves along to the stage now shown (a keyboard user keeps a place).
  if (player.stageGroup.contains(document.activeElement)) {
    player.stageGroup.querySelector('[aria-pressed="true"]')?.focus({ preventScroll: true });
  }
}

// ---- variants: one player, several payloads --------------------------------------------------------
// data.variants: [{name, label, gz?, hash?, tokens?, story, server?}], data.variant: the one Python drew,
// params.variant: its URL key. A variant whose frames are here is switched to in the browser (the frames,
// the grid under them and its story swap; nothing goes to the server); a server variant (server: true,
// e.g. compare's two calls through the real kernel) and any switch away from one is sent through the
// relay, which runs the page. The current variant rides along in every flush, so Python's copy follows
// before any click that may need it.

function useVariant(player) {
  const { variants, variant } = player.data;
  player.variantBar.hidden = !variants;
  if (!variants) return;
  if (player.drawnVariant !== variant) {                 // Python drew another one (a link, a relayed switch)
    player.drawnVariant = variant;
    player.variant = variant;
  }
  const own = (player.data.own ??= { gz: player.data.gz, hash: player.data.hash, tokens: player.data.tokens });
  const v = variants.find((x) => x.name === player.variant) ?? variants.find((x) => x.name === variant);
  player.variant = v.name;
  for (const x of variants) {                            // kept: a later mount sends only the hashes
    if (x.gz) payloadOf(x.hash, x.gz);
    else if (x.hash) keepRecent(x.hash);
  }
  if (!v.server) Object.assign(player.data, v.hash ? { gz: v.gz, hash: v.hash, tokens: v.tokens } : own);
  player.root.classList.toggle("gdn-bar-only", !!v.server);
  if (v.server) {                                        // nothing of the frames stays in the page meanwhile
    for (const part of [player.figure, player.head, player.narration, player.side]) part.replaceChildren();
    player.shown = -1;
  }
  player.story.innerHTML = v.story ?? "";
  player.story.hidden = !v.story;
  document.body.dataset[`${player.id}Variant`] = v.name;   // page CSS may hide what belongs to one variant
  if (player.variantBar.dataset.names !== variants.map((x) => x.name + x.label).join("|")) {
    player.variantBar.replaceChildren();
    player.variantBar.setAttribute("role", "group");
    for (const x of variants) {
      const b = el("button", "gdn-variant", player.variantBar);
      b.type = "button";
      b.textContent = x.label;
      b.dataset.variant = x.name;
      b.addEventListener("click", () => switchVariant(player, x.name));
    }
    player.variantBar.dataset.names = variants.map((x) => x.name + x.label).join("|");
  }
  for (const b of player.variantBar.children) b.setAttribute("aria-pressed", String(b.dataset.variant === v.name));
}

function switchVariant(player, name) {
  if (name === player.variant) return;
  const { variants, params } = player.data;
  const target = variants.find((x) => x.name === name);
  const drawn = variants.find((x) => x.name === player.drawnVariant);
  player.variant = name;
  writeAddress({ [params.variant]: name === variants[0].name ? null : name });
  player.moved = true;
  if (target.server || drawn?.server) {                  // the page has to change around the player: run it
    useVariant(player);
    flush();
    return;
  }
  stopPlaying(player);
  useVariant(player);
  relabel(player);
  load(player).then(() => show(player, player.index));
}
