// The packed payloads this tab was sent, by hash (app_pages/_support/payload.py): Python sends a
// payload's gz the first time its session meets it, then its hash alone. Shared by the player and the
// explorer (prepended to both by player.py and explorer.py); keeps the 48 used last (Python counts 32).
const PAYLOADS_KEPT = 48;

// The gz of `hash` (given: kept; missing: looked up), or null when this tab lacks it: then Python is
// asked, through the players' relay, to send everything again; the run that answers mounts it anew.
function payloadOf(hash, gz) {
  const kept = (window.__gdnPayloads ??= new Map());
  const found = gz || kept.get(hash);
  if (!found) {
    const relay = (window.__gdnPlayers ??= { players: new Map(), last: null });
    if (relay.need) relay.need(hash);
    else relay.pendingNeed = hash;           // the relay is not mounted yet: it asks when it is
    return null;
  }
  kept.delete(hash);
  kept.set(hash, found);                     // the most recent last
  while (kept.size > PAYLOADS_KEPT) kept.delete(kept.keys().next().value);
  return found;
}

async function unpackPayload(gz) {
  const bytes = Uint8Array.from(atob(gz), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}
