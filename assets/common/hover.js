// Linked hovers, the one linker: pointing at an element marked data-<attribute>="x" lights every element in
// `scope` marked x (the class `litClass`). pack.py's component_js puts this file after assets/common/keys.js.
// Two kinds use it: the page's tokens (data-tok, assets/common/relay.js: a gates cell, a guess, a token chip
// and its card) and an explorer's figure (data-link, assets/explorer/explorer.js).
//
// Options: sticky (pointing at nothing marked keeps the light: the token card stays while it is read; only
// leaving the scope puts it out), focus (a focused element lights its links as a pointed-at one does: the
// explorer's keyboard users), onLight(value) (after each change, value null when nothing is lit).
// Returns {lit(), light(value), repaint()}: repaint() lights the current value's elements again after the
// scope's HTML was swapped (an explorer's move), or puts the light out where none carries it any more.

function linkHovers(scope, { attribute, litClass, sticky = false, focus = false, onLight = () => {} }) {
  const selector = `[data-${attribute}]`;
  const marked = (value) => `[data-${attribute}="${CSS.escape(value)}"]`;
  let current = null;
  const paint = () => {
    for (const node of scope.querySelectorAll(`.${litClass}`)) node.classList.remove(litClass);
    if (current !== null) for (const node of scope.querySelectorAll(marked(current))) node.classList.add(litClass);
    onLight(current);
  };
  const light = (value) => {
    if (value === current) return;
    current = value;
    paint();
  };
  const valueAt = (node) => node?.closest?.(selector)?.getAttribute(`data-${attribute}`) ?? null;
  scope.addEventListener("pointerover", (e) => light(valueAt(e.target) ?? (sticky ? current : null)));
  scope.addEventListener("pointerleave", () => light(null));
  if (focus) {
    scope.addEventListener("focusin", (e) => light(valueAt(e.target)));
    scope.addEventListener("focusout", () => light(null));
  }
  return {
    lit: () => current,
    light,
    repaint() {
      if (current !== null && !scope.querySelector(marked(current))) current = null;
      paint();
    },
  };
}
