export default function(component) {
  const { data, setTriggerValue } = component;
  const store = window.sessionStorage;
  const before = store.getItem("gdn.server");
  const kept = store.getItem("gdn.kept");
  if (before && before !== data.server && data.fresh && kept) {
    setTriggerValue("moved", JSON.parse(kept));        // a new server: hand the tab's prompt back, once
  } else if (data.kept) {
    store.setItem("gdn.kept", JSON.stringify(data.kept));
  }
  store.setItem("gdn.server", data.server);
}
