// The swapper (app_pages/_support/swap.py): one of several HTML views that Python drew, picked in the
// browser. The real model's layer: every layer's gates are in one packed payload, and a layer button only
// swaps which one is shown, so a layer change paints in one frame and sends nothing to the server. Every
// swapper with the same param (the gates and the overview under them) follows the same pick. The choice
// goes into the address bar at once, and to Python only when a click outside may need it (another view,
// Share), through the players' relay (app_pages/_support/player.py), as the player's position does.
//
// data: id, param (the URL and session key), value (what Python drew), fallback (the value a link leaves
// out), options [{value, label}], label (the bar's name; no bar when empty), hash, gz (base64 gzip of JSON
// {frames: {value: html}}).
export default function ({ data, parentElement }) {
  const registry = (window.__gdnSwaps ??= { swaps: new Map(), picked: new Map(), moved: new Map() });
  installFlush(registry);
  let swap = registry.swaps.get(data.id);
  if (!swap || swap.host !== parentElement || !swap.root.isConnected) {
    swap = { id: data.id, host: parentElement, hash: null, frames: {}, shown: null };
    parentElement.replaceChildren();
    swap.root = el("div", "gdn-swap", parentElement);
    swap.bar = el("div", "gdn-swap-bar", swap.root);
    swap.bar.setAttribute("role", "group");
    swap.body = el("div", "gdn-swap-body", swap.root);
    registry.swaps.set(data.id, swap);
  }
  swap.data = data;
  if (registry.drawn?.get(data.param) !== data.value) {   // Python drew another value (a link, a relayed pick)
    (registry.drawn ??= new Map()).set(data.param, data.value);
    registry.picked.set(data.param, data.value);
  }
  load(swap).then(() => { drawBar(swap, registry); paint(swap, registry.picked.get(data.param)); });
}

async function load(swap) {
  if (swap.hash === swap.data.hash) return;
  swap.frames = (await unpack(swap.data.gz)).frames;
  swap.hash = swap.data.hash;
  swap.shown = null;
}

function drawBar(swap, registry) {
  const { options, label, param } = swap.data;
  swap.bar.hidden = !label;
  const sig = options.map((o) => `${o.value}:${o.label}`).join("|");
  if (!label || swap.bar.dataset.sig === sig) return;
  swap.bar.replaceChildren();
  swap.bar.setAttribute("aria-label", label);
  el("span", "gdn-swap-name", swap.bar).textContent = label;
  for (const o of options) {
    const b = el("button", "gdn-swap-btn", swap.bar);
    b.type = "button";
    b.textContent = o.label;
    b.dataset.value = String(o.value);
    b.addEventListener("click", () => pick(registry, param, String(o.value)));
  }
  swap.bar.dataset.sig = sig;
}

function paint(swap, value) {
  const html = swap.frames[value];
  if (html === undefined) return;
  if (swap.shown !== value) {
    swap.body.innerHTML = html;
    swap.shown = value;
  }
  for (const b of swap.bar.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.value === value));
}

function pick(registry, param, value) {
  registry.picked.set(param, value);
  registry.moved.set(param, value);
  let fallback = null;
  for (const swap of registry.swaps.values()) {
    if (swap.data.param !== param || !swap.root.isConnected) continue;
    paint(swap, value);
    fallback = swap.data.fallback;
  }
  const url = new URL(window.location.href);
  if (value === String(fallback)) url.searchParams.delete(param);
  else url.searchParams.set(param, value);
  if (url.href !== window.location.href) window.history.replaceState(window.history.state, "", url.href);
}

function installFlush(registry) {
  // Before a click or Enter outside the swappers: what was picked goes to Python in that click's run.
  if (registry.flush) return;
  registry.flush = () => {
    const relay = window.__gdnPlayers?.relay;
    if (!relay) return;
    for (const [param, value] of registry.moved) relay("position", { id: "swap", key: param, value });
    registry.moved.clear();
  };
  flushBeforeLeaving((node) => [...registry.swaps.values()].some((s) => s.bar.contains(node)), registry.flush);
}
