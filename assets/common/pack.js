// Shared by the browser components that show what Python packed (the player, the explorer, the swapper):
// app_pages/_support/pack.py's component_js puts this file (after assets/common/view.js) in front of each
// component's own JS, so these are plain functions of that component's module. Nothing here computes a number.

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

function el(tag, className, parent) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (parent) parent.appendChild(node);
  return node;
}

// The one payload loader of a view that shows one packed payload (the player, the explorer): view.data.hash
// is the payload wanted, view.data.gz its text when this mount carried it; view.hash is the one shown.
// Shown already: only the tab's order of use changes. Missing from the tab (payloadOf asked Python for it):
// clear() empties the view, so nothing stale shows meanwhile. Else it is unpacked and apply(payload) takes
// it, unless a newer mount came while unpacking.
async function loadPayload(view, { clear, apply }) {
  const { hash } = view.data;
  if (view.hash === hash) {
    keepRecent(hash);
    return;
  }
  const gz = payloadOf(hash, view.data.gz);
  if (!gz) {
    view.hash = null;
    clear();
    return;
  }
  const payload = await unpack(gz);
  if (view.data.hash !== hash) return;
  apply(payload);
  view.hash = hash;
}
