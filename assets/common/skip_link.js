// Streamlit's own skip link ("Skip to main content", the first thing a keyboard or a screen reader meets)
// is drawn in English by Streamlit itself. A v2 component (app_pages/_support/browser.py, every page) gives
// the page language's words (common.skip_link); the link is named again whenever Streamlit draws it anew,
// by one observer per tab, which reads the newest words.

export function rename(doc, label) {
  const link = doc.querySelector('[data-testid="stSkipToContent"]');
  if (link && label && link.textContent !== label) link.textContent = label;
}

export default function(component) {
  window.gdnSkipLabel = component.data && component.data.label;
  rename(document, window.gdnSkipLabel);
  if (window.gdnSkipLink) return;
  window.gdnSkipLink = new MutationObserver(() => rename(document, window.gdnSkipLabel));
  window.gdnSkipLink.observe(document.body, { childList: true, subtree: true });
}
