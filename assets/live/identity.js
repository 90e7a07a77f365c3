export default function(component) {
  const { data, setStateValue } = component;
  let saved = {};
  try { saved = JSON.parse(window.localStorage.getItem("gdn-live") || "{}") || {}; } catch (e) { saved = {}; }
  if (!saved.voter) {
    const bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    saved.voter = Array.from(bytes, b => b.toString(16).padStart(2, "0")).join("");
  }
  if (data && "host" in data) saved.host = data.host;
  try { window.localStorage.setItem("gdn-live", JSON.stringify(saved)); } catch (e) { /* private mode: this tab only */ }
  setStateValue("voter", saved.voter);
  setStateValue("host", saved.host || null);
}
