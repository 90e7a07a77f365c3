// What a browser keeps of the live class in its localStorage: its seat in each room it joined (a token
// the server minted: a phone that reloads or reconnects to another replica keeps its seat) and, on the
// teacher's browser, the room it runs (code + secret, so a reload keeps the room). Anything else found
// there (an old version's fields, a hand-edited value) is dropped: Python checks again what it is sent.
const TOKEN = /^[A-Za-z0-9_-]{8,64}$/;
const CODE = /^[A-Z0-9]{6}$/;

export function cleaned(saved) {
  const out = { seats: {}, host: null };
  if (!saved || typeof saved !== "object") return out;
  const host = saved.host;
  if (host && typeof host === "object" && typeof host.code === "string" && CODE.test(host.code)
      && typeof host.secret === "string" && TOKEN.test(host.secret)) {
    out.host = { code: host.code, secret: host.secret };
  }
  for (const [code, seat] of Object.entries(saved.seats && typeof saved.seats === "object" ? saved.seats : {})) {
    if (CODE.test(code) && typeof seat === "string" && TOKEN.test(seat)) out.seats[code] = seat;
  }
  return out;
}

export default function(component) {
  const { data, setStateValue } = component;
  let saved;
  try { saved = cleaned(JSON.parse(window.localStorage.getItem("gdn-live") || "{}")); } catch (e) { saved = cleaned(null); }
  if (data && "host" in data) saved.host = data.host;
  if (data && data.seat) {                       // the server minted a seat here (token) or dropped it (null)
    if (data.seat.token) saved.seats[data.seat.code] = data.seat.token;
    else delete saved.seats[data.seat.code];
  }
  try { window.localStorage.setItem("gdn-live", JSON.stringify(saved)); } catch (e) { /* private mode: this tab only */ }
  setStateValue("seats", saved.seats);
  setStateValue("host", saved.host);
}
