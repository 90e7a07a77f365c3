// The relay: the views' one way to Python (assets/common/view.js, flush and payloadOf), mounted by
// app_pages/_support/view.py outside every fragment, so a message arrives in the same full run as the click
// that made it go. "sent" carries a batch of typed messages; "need" asks for every payload again.
export default function ({ setStateValue, setTriggerValue }) {
  connectRelay((batch) => setStateValue("sent", batch), (hash) => setTriggerValue("need", hash));
  once("hover-links", linkHovers);
}

// Linked hovers: pointing at anything marked data-tok="t" (a gates cell, a guess, a token chip) lights
// every element of token t on the page and shows its card (data-card="t") in each card slot.
function linkHovers() {
  let current = null;
  const light = (t) => {
    if (t === current) return;
    for (const node of document.querySelectorAll(".gdn-tok-hover")) node.classList.remove("gdn-tok-hover");
    if (t !== null) for (const node of document.querySelectorAll(`[data-tok="${CSS.escape(t)}"]`)) node.classList.add("gdn-tok-hover");
    for (const slot of document.querySelectorAll(".gdn-tok-slot")) {
      for (const card of slot.children) card.hidden = card.dataset.card !== (t ?? "none");
    }
    current = t;
  };
  document.addEventListener("pointerover", (e) => light(e.target.closest?.("[data-tok]")?.dataset.tok ?? current));
  document.addEventListener("pointerleave", () => light(null));
}
