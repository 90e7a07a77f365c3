// Streamlit's own skip link ("Skip to main content", the first thing a keyboard or a screen reader meets)
// is drawn in English by Streamlit itself. app_pages/_support/browser.py sets window.gdnSkipLabel to the
// page language's words (common.skip_link) before this runs; the link is named again whenever Streamlit
// draws it anew. No "<" before a letter, "/" or "!" here: DOMPurify drops a script whose text has one.
(() => {
  const name = () => {
    const link = document.querySelector('[data-testid="stSkipToContent"]');
    if (link && window.gdnSkipLabel && link.textContent !== window.gdnSkipLabel) link.textContent = window.gdnSkipLabel;
  };
  name();
  if (window.gdnSkipLink) return;
  window.gdnSkipLink = new MutationObserver(name);
  window.gdnSkipLink.observe(document.body, { childList: true, subtree: true });
})();
