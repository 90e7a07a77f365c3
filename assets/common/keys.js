// The keys of a tab: one keydown listener (window, capture: before the page's own) and one rule for "is the
// learner typing". pack.py's component_js puts this file after assets/common/view.js, so these are plain
// functions of each component's module; the handlers live in the tab's one object (tab().keys), so a
// handler registered by one component's module and the listener installed by another's meet there.
//
// A handler: handler(event, {typing}) -> true when it took the key. Then the page never sees the key (no
// scroll, no radio or tab change) and no handler after it is asked. Handlers are asked in KEY_RANKS order:
// those that only watch (the flush before leaving, follow-me's hush) first, then the room's clicker (it runs
// the class even over a demo on the room's page), then the players.

const KEY_RANKS = { flush: 0, hush: 1, clicker: 2, player: 3 };

// Typing or choosing: a text field, a text area, a drop-down, editable text, a list or combo box being chosen
// in, a grid that moves its own cursor (the token editor). Their keys are theirs. A button, a checkbox, a
// radio or a slider is no typing: the keys go on to the room and the players.
const TYPED_INTO = 'textarea, select, [contenteditable]:not([contenteditable="false"]), [role="textbox"], '
  + '[role="searchbox"], [role="combobox"], [role="listbox"], [role="grid"], [role="gridcell"]';
const NOT_TEXT = /^(radio|checkbox|button|submit|reset|range|color|file|image)$/;

function typing(node) {
  if (!node || typeof node.closest !== "function") return false;
  if (node.tagName === "INPUT" && !NOT_TEXT.test((node.getAttribute("type") || "text").toLowerCase())) return true;
  return !!node.closest(TYPED_INTO);
}

// Registers (or replaces: a component drawn again) the handler `name`, one of KEY_RANKS.
function onKeys(name, handler) {
  if (!(name in KEY_RANKS)) throw new Error(`no key handler named ${name}: name one of ${Object.keys(KEY_RANKS)}`);
  const t = tab();
  t.keys.set(name, handler);
  once("keys", () => window.addEventListener("keydown", dispatchKey, true));
}

function offKeys(name) {
  tab().keys.delete(name);
}

function dispatchKey(event) {
  const handlers = [...tab().keys].sort(([a], [b]) => KEY_RANKS[a] - KEY_RANKS[b]);
  const context = { typing: typing(event.target?.closest ? event.target : document.activeElement) };
  for (const [, handler] of handlers) {
    if (!handler(event, context)) continue;
    event.preventDefault();
    event.stopImmediatePropagation();
    return;
  }
}
