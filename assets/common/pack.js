// Shared by the browser components that show what Python packed (the player, the explorer, the swapper):
// app_pages/_support/pack.py's component_js prepends this file to each component's own JS, so these
// are plain functions of that component's module. Nothing here computes a number.

// The component's CSS (the page runs with isolate_styles=False, so a component's css= is applied
// nowhere): one <style id=...> in the document head, rewritten only when the text changed.
function addStyle(id, css) {
  let style = document.getElementById(id);
  if (!style) {
    style = document.createElement("style");
    style.id = id;
    document.head.appendChild(style);
  }
  if (style.textContent !== css) style.textContent = css;
}

// A payload that Python packed (pack.py's pack_json: base64 of gzip of JSON) -> the parsed JSON.
async function unpack(gz) {
  const bytes = Uint8Array.from(atob(gz), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

// The packed payloads this tab was sent, by hash (app_pages/_support/payload.py): Python sends a player's
// or explorer's gz the first time its session meets it, then its hash alone. Keeps the 48 used last
// (Python counts 32 as sent). Returns the gz of `hash` (given: kept; missing: looked up), or null when this
// tab lacks it: then Python is asked, through the players' relay, to send everything again, and the run
// that answers mounts it anew.
const PAYLOADS_KEPT = 48;

function payloadOf(hash, gz) {
  const kept = (window.__gdnPayloads ??= new Map());
  const found = gz || kept.get(hash);
  if (!found) {
    const relay = (window.__gdnPlayers ??= { players: new Map(), last: null });
    if (relay.need) relay.need(hash);
    else relay.pendingNeed = hash;           // the relay is not mounted yet: it asks when it is
    return null;
  }
  kept.delete(hash);
  kept.set(hash, found);                     // the most recent last
  while (kept.size > PAYLOADS_KEPT) kept.delete(kept.keys().next().value);
  return found;
}

function el(tag, className, parent) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (parent) parent.appendChild(node);
  return node;
}

// What counts as a click or Enter that may run Python: the values moved in the browser must reach it
// first (through the players' relay, app_pages/_support/player.py), so they arrive in that same run.
const CONTROLS = 'button, a, input, select, textarea, label, [role="button"], [role="tab"], [role="slider"], '
  + '[role="option"], [role="spinbutton"], [role="combobox"]';

// Call flush() just before a pointer press on a control, or Enter, outside the component (inside(node)
// says what is its own). skip(target): presses not to flush on (the player leaves page links alone).
function flushBeforeLeaving(inside, flush, skip = () => false) {
  document.addEventListener("pointerdown", (e) => {
    if (e.target.closest?.(CONTROLS) && !inside(e.target) && !skip(e.target)) flush();
  }, true);
  window.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !inside(document.activeElement)) flush();
  }, true);
}
