// The swapper (app_pages/_support/swap.py): one of several HTML views that Python drew, picked in the
// browser. The real model's layer: every layer's gates are sent, each as a packed payload of its own, and a
// layer button only swaps which one is shown, so a layer change paints in one frame and sends nothing to the
// server. Each layer's payload comes to a tab once (view.js's payloadOf): a later run sends its hash alone.
// Every swapper of one param (the gates and the overview under them) follows the same pick: the pick is a
// view of assets/common/view.js, of kind "pick", id the param and message {value}, so the address, the
// handshake with Python and the flush before a click outside are view.js's, as for the player.
//
// data: id, param (the URL and session key), seq (view.py's handshake), value (what Python drew), fallback
// (the value a link leaves out), options [{value, label, hash, gz?}] (gz: base64 gzip of the JSON string of
// that option's HTML, left out when this tab was sent it), label (the bar's name; no bar when empty).
export default function ({ data, parentElement }) {
  const pick = tab().views.get(`pick:${data.param}`) ?? newPick(data.param);
  let swap = pick.swaps.get(data.id);
  if (!swap || swap.host !== parentElement || !swap.root.isConnected) swap = build(pick, data.id, parentElement);
  swap.data = data;
  pick.fallback = data.fallback;
  if (pythonMoved(pick, data.seq) || !data.options.some((o) => o.value === pick.value)) {
    pick.value = data.value;                                 // a new tab, a link, a story button, other options
  }
  load(pick, swap).then((ready) => {
    if (!ready || swap.data !== data) return;                // asked for again, or a newer mount came meanwhile
    drawBar(swap, pick);
    paint(pick, swap);
  });
}

function newPick(param) {
  const pick = { kind: "pick", id: param, seq: null, value: null, fallback: null, moved: false,
                 swaps: new Map(), html: new Map() };       // html: hash -> an option's HTML, unpacked once
  const mounted = () => [...pick.swaps.values()].filter((s) => s.root.isConnected);
  pick.connected = () => mounted().length > 0;
  pick.holds = (node) => mounted().some((s) => s.bar.contains(node));
  pick.message = () => ({ value: pick.value });
  return register(pick);
}

function build(pick, id, host) {
  host.replaceChildren();
  const swap = { id, host, shown: null };
  swap.root = el("div", "gdn-swap", host);
  swap.bar = el("div", "gdn-swap-bar", swap.root);
  swap.bar.setAttribute("role", "group");
  swap.body = el("div", "gdn-swap-body", swap.root);
  pick.swaps.set(id, swap);
  return swap;
}

// Every option's HTML, from the tab's payloads: false (and nothing stale shown) when one is missing, which
// payloadOf has asked Python for.
async function load(pick, swap) {
  const { options } = swap.data;
  const packed = options.map((o) => payloadOf(o.hash, o.gz));   // every one: the tab keeps the used ones
  if (packed.includes(null)) {
    swap.body.replaceChildren();
    swap.shown = null;
    return false;
  }
  const todo = options.map((o, i) => [o.hash, packed[i]]).filter(([hash]) => !pick.html.has(hash));
  const html = await Promise.all(todo.map(([, gz]) => unpack(gz)));
  todo.forEach(([hash], i) => pick.html.set(hash, html[i]));
  const kept = new Set([...pick.swaps.values()].flatMap((s) => s.data.options.map((o) => o.hash)));
  for (const hash of pick.html.keys()) if (!kept.has(hash)) pick.html.delete(hash);
  return true;
}

function drawBar(swap, pick) {
  const { options, label } = swap.data;
  swap.bar.hidden = !label;
  const sig = [label, ...options.map((o) => `${o.value}:${o.label}`)].join("|");   // a new language renames it
  if (!label || swap.bar.dataset.sig === sig) return;
  swap.bar.replaceChildren();
  swap.bar.setAttribute("aria-label", label);
  el("span", "gdn-swap-name", swap.bar).textContent = label;
  for (const o of options) {
    const b = el("button", "gdn-swap-btn", swap.bar);
    b.type = "button";
    b.textContent = o.label;
    b.dataset.value = String(o.value);
    b.addEventListener("click", () => choose(pick, String(o.value)));
  }
  swap.bar.dataset.sig = sig;
}

// Paint the picked option's HTML (once unpacked); swap.shown is the hash of the HTML on screen, so the same
// layer of another trace or language is painted anew.
function paint(pick, swap) {
  const option = swap.data.options.find((o) => o.value === pick.value);
  const html = option && pick.html.get(option.hash);
  if (html === undefined) return;
  if (swap.shown !== option.hash) {
    swap.body.innerHTML = html;
    swap.shown = option.hash;
  }
  for (const b of swap.bar.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.value === pick.value));
}

function choose(pick, value) {
  pick.value = value;
  pick.moved = true;                                          // told to Python by view.js's flush, when it needs it
  for (const swap of pick.swaps.values()) if (swap.root.isConnected) paint(pick, swap);
  writeAddress({ [pick.id]: value === String(pick.fallback) ? null : value });
}
