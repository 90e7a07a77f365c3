export default function ({ setStateValue, setTriggerValue }) {
  // The players' way to Python (assets/player/player.js, flush): mounted outside every fragment.
  const registry = (window.__gdnPlayers ??= { players: new Map(), last: null });
  registry.relay = setStateValue;
  // A payload this tab lacks (payloadOf, assets/common/pack.js): Python sends them all again in this run.
  registry.need = (hash) => setTriggerValue("need", hash);
  if (registry.pendingNeed) registry.need(registry.pendingNeed);
  registry.pendingNeed = null;
  if (registry.linker) return;
  // Linked hovers: pointing at anything marked data-tok="t" (a gates cell, a guess, a token chip) lights
  // every element of token t on the page and shows its card (data-card="t") in each card slot.
  registry.linker = true;
  let current = null;
  const light = (t) => {
    if (t === current) return;
    for (const el of document.querySelectorAll(".gdn-tok-hover")) el.classList.remove("gdn-tok-hover");
    if (t !== null) for (const el of document.querySelectorAll(`[data-tok="${CSS.escape(t)}"]`)) el.classList.add("gdn-tok-hover");
    for (const slot of document.querySelectorAll(".gdn-tok-slot")) {
      for (const card of slot.children) card.hidden = card.dataset.card !== (t ?? "none");
    }
    current = t;
  };
  document.addEventListener("pointerover", (e) => light(e.target.closest?.("[data-tok]")?.dataset.tok ?? current));
  document.addEventListener("pointerleave", () => light(null));
}
