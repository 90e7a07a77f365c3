// A lone surrogate (half of a UTF-16 pair, from a broken paste) cannot be encoded as UTF-8, and the server
// then fails to decode every later message of the tab. A v2 component (app_pages/_support/browser.py, every
// page) installs one capture-phase listener per tab that rewrites each one as U+FFFD before the widget's
// own handler reads the value.

export function wellFormed(s) {
  if (s.toWellFormed) return s.toWellFormed();
  let out = "";
  for (const ch of s) {                       // a lone surrogate comes out of the iterator on its own
    const c = ch.codePointAt(0);
    out += (c >= 0xD800 && c <= 0xDFFF) ? "\uFFFD" : ch;
  }
  return out;
}

export function cleanInput(el) {
  if (!(el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement) || typeof el.value !== "string") return;
  const clean = wellFormed(el.value);
  if (clean === el.value) return;
  // the prototype's setter: React's own value tracker must still see a change, or it drops the input
  const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, "value").set.call(el, clean);
}

export default function() {
  if (window.gdnCleanInputs) return;
  window.gdnCleanInputs = true;
  window.addEventListener("input", (event) => cleanInput(event.target), true);
}
