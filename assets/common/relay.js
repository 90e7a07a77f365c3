// The relay: the views' one way to Python (assets/common/view.js, flush and payloadOf), mounted by
// app_pages/_support/view.py outside every fragment, so a message arrives in the same full run as the click
// that made it go. "sent" carries a batch of typed messages; "need" asks for every payload again.
export default function ({ setStateValue, setTriggerValue }) {
  connectRelay((batch) => setStateValue("sent", batch), (hash) => setTriggerValue("need", hash));
  once("hover-links", linkTokens);
}

// Linked hovers over the page's tokens (assets/common/hover.js): pointing at anything marked data-tok="t" (a
// gates cell, a guess, a token chip) lights every element of token t on the page and shows its card
// (data-card="t") in each card slot; the card stays while the pointer moves off to read it.
function linkTokens() {
  const showCard = (t) => {
    for (const slot of document.querySelectorAll(".gdn-tok-slot")) {
      for (const card of slot.children) card.hidden = card.dataset.card !== (t ?? "none");
    }
  };
  linkHovers(document, { attribute: "tok", litClass: "gdn-tok-hover", sticky: true, onLight: showCard });
}
