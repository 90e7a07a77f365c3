// The explorer (app_pages/_support/explorer.py): a figure whose discrete sliders and linked hovers are
// answered in the browser. Python drew the figure's HTML at every point of the sliders' grid; this file
// only picks the point's HTML and swaps it in (it computes no number), lights the elements linked to the
// one pointed at, writes the values into the address bar, and hands them to Python only when a click
// elsewhere may need them: an explorer is a view of assets/common/view.js, of kind "values", its message
// {values: {key: value}}.
//
// Payload (data): id, seq, index [one per control], controls [{key, label, values, labels, default, play}],
// labels {play, pause}, alt, below, lecture, playMs, hash, gz (base64 gzip of JSON {"i,j": html}; left
// out when this tab was already sent it: payloadOf in view.js keeps it),
// download (null, or {label, file, parts: [the standalone page before the frame, after it]}).
export default function ({ data, parentElement, setTriggerValue }) {
  addStyle("gdn-explorer-css", EXPLORER_CSS);   // EXPLORER_CSS: assets/explorer/explorer.css, prepended by explorer.py
  const view = tab().views.get(`values:${data.id}`) ?? newExplorer(data.id);
  view.data = data;
  view.open = setTriggerValue;
  // the controls change with the server-side widgets that pick the grid (a fourth slider, another range)
  const controls = JSON.stringify(data.controls);
  if (view.host !== parentElement || !view.root?.isConnected || view.controls !== controls) {
    build(view, parentElement);
    view.controls = controls;
  }
  load(view).then(() => {
    // a new mount, Python moved the values on purpose, or another grid
    if (pythonMoved(view, data.seq) || !view.index || view.index.length !== data.index.length) {
      view.index = [...data.index];
    }
    show(view);
  });
  return () => stopPlaying(view);
}

function newExplorer(id) {
  const view = { kind: "values", id, index: null, seq: null, hash: null, frames: {}, timer: null, moved: false,
                 linker: null };
  view.message = () => ({ values: currentValues(view) });
  return register(view);
}

function load(view) {
  return loadPayload(view, {                             // pack.js: sent once per tab, unpacked once per mount
    clear() {
      view.frames = {};
      view.shown = null;
      view.figure.replaceChildren();
    },
    apply(frames) {
      view.frames = frames;
      view.shown = null;
    },
  });
}

// ---- the controls and the figure ------------------------------------------------------------------

function build(view, host) {
  stopPlaying(view);
  host.replaceChildren();
  const { controls, below } = view.data;
  const root = el("div", `gdn-explorer${view.data.side ? " side" : ""}`, host);
  const bar = el("div", "gdn-explorer-bar");
  view.figure = el("div", "gdn-explorer-figure gdn-figure");
  root.append(...(below ? [view.figure, bar] : [bar, view.figure]));
  view.sliders = controls.map((c, i) => {
    const box = el("label", "gdn-explorer-control", bar);
    el("span", "gdn-explorer-label", box).textContent = c.label;
    const row = el("span", "gdn-explorer-row", box);
    const input = el("input", `gdn-explorer-slider gdn-x-${c.key}`, row);
    Object.assign(input, { type: "range", min: "0", max: String(c.values.length - 1), step: "1" });
    input.addEventListener("input", () => move(view, i, Number(input.value)));
    const out = el("output", "gdn-explorer-value", row);
    let play = null;
    if (c.play) {
      play = el("button", "gdn-explorer-play", row);
      play.type = "button";
      play.addEventListener("click", (e) => { e.preventDefault(); togglePlay(view, i); });
    }
    return { input, out, play };
  });
  // The download: the frame on screen inside the standalone page Python wrote around it (no rerun).
  const download = view.data.download;
  if (download) {
    const button = el("button", "gdn-explorer-download", bar);
    button.type = "button";
    button.textContent = `⤓ ${download.label}`;
    button.addEventListener("click", (e) => {
      e.preventDefault();
      const page = download.parts[0] + (view.frames[view.shown] ?? "") + download.parts[1];
      const link = el("a");
      link.href = URL.createObjectURL(new Blob([page], { type: "text/html" }));
      link.download = download.file;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 1000);
    });
  }
  // Linked hovers (assets/common/hover.js): pointing at (or focusing) an element marked data-link="x" lights
  // every one marked x; the light stays on the same link across a move (show's repaint).
  view.linker = linkHovers(view.figure, { attribute: "link", litClass: "gdn-lit", focus: true, onLight: (lit) => {
    view.figure.classList.toggle("gdn-linking", lit !== null);
    view.figure.dataset.lit = lit ?? "";
  } });
  view.figure.addEventListener("click", (e) => {
    const target = e.target.closest?.("[data-open]");
    if (target) view.open("open", target.dataset.open);
  });
  view.root = root;
  view.host = host;
  view.shown = null;                             // the new figure box is empty (back on the page: drawn again)
}

function move(view, control, to) {
  if (!view.index) return;
  view.index[control] = to;
  view.moved = true;
  show(view);
}

function show(view) {
  const { controls, alt, labels } = view.data;
  const name = pointName(view.index);
  if (view.shown !== name && view.frames[name] !== undefined) {
    view.figure.innerHTML = view.frames[name];
    view.shown = name;
    view.linker.repaint();                       // the light stays on the same link across a move
  }
  if (alt) view.figure.setAttribute("aria-label", alt);
  view.root.classList.toggle("lecture", !!view.data.lecture);
  controls.forEach((c, i) => {
    const { input, out, play } = view.sliders[i];
    input.value = String(view.index[i]);
    input.setAttribute("aria-valuetext", c.labels[view.index[i]]);
    out.textContent = c.labels[view.index[i]];
    if (play) {
      const playing = view.timer && view.timer.control === i;
      play.textContent = playing ? `❚❚ ${labels.pause}` : `▶ ${labels.play}`;
      play.setAttribute("aria-pressed", String(!!playing));
    }
  });
  writeAddress(addressOf(controls, view.index));
}

// ---- playing: walk one control through its values ---------------------------------------------------

function togglePlay(view, control) {
  if (view.timer) {
    const same = view.timer.control === control;
    stopPlaying(view);
    if (same) return show(view);
  }
  const last = view.data.controls[control].values.length - 1;
  if (view.index[control] >= last) move(view, control, 0);
  const id = setInterval(() => {
    if (!view.root.isConnected || view.index[control] >= last) { stopPlaying(view); return show(view); }
    move(view, control, view.index[control] + 1);
  }, view.data.playMs);
  view.timer = { id, control };
  show(view);
}

function stopPlaying(view) {
  if (!view.timer) return;
  clearInterval(view.timer.id);
  view.timer = null;
}

// ---- the grid, the address bar and Python ----------------------------------------------------------------

// The grid point the sliders are at, named as explorer.py's grid_points names it: "i,j,..." (option indices).
const pointName = (index) => index.join(",");

// The values at `index`: {key: value}, every control's (the address and Python's message).
function valuesAt(controls, index) {
  return Object.fromEntries(controls.map((c, i) => [c.key, c.values[index[i]]]));
}

// The address: each control's value, left out at its default.
function addressOf(controls, index) {
  return Object.fromEntries(controls.map((c, i) => [c.key, c.values[index[i]] === c.default ? null : c.values[index[i]]]));
}

const currentValues = (view) => valuesAt(view.data.controls, view.index);
