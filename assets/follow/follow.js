export default function ({ data }) {
  const registry = (window.__gdnPlayers ??= { players: new Map(), last: null });
  if (data.navigate) {               // a student: the teacher's page or example, loaded afresh
    if (registry.navigating !== data.navigate) {
      registry.navigating = data.navigate;
      window.location.assign(new URL(data.navigate, window.location.href).href);
    }
    return;
  }
  // A student: the teacher's step of the example this page shows; the player moves there (player.js).
  registry.follow = data;
  registry.applyFollow?.();
}
