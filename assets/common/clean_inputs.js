if (!window.gdnCleanInputs) {
  window.gdnCleanInputs = true;
  const wellFormed = (s) => {
    if (s.toWellFormed) return s.toWellFormed();
    let out = "";
    for (const ch of s) {                       // a lone surrogate comes out of the iterator on its own
      const c = ch.codePointAt(0);
      out += (c >= 0xD800 && c <= 0xDFFF) ? "\uFFFD" : ch;
    }
    return out;
  };
  window.addEventListener("input", (event) => {
    const el = event.target;
    if (!(el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement) || typeof el.value !== "string") return;
    const clean = wellFormed(el.value);
    if (clean === el.value) return;
    // the prototype's setter: React's own value tracker must still see a change, or it drops the input
    const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, "value").set.call(el, clean);
  }, true);
}
