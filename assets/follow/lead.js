// The teacher's side of follow-me (app_pages/_follow.py): the address, as the views write it
// (assets/common/view.js), is the view a room follows.
export default function ({ data, setStateValue }) {
  // The teacher's view is the page Python drew (data.page: the address's path can lag behind a page
  // switch) and the address's query (example, step): report it once it holds still. One timer per tab,
  // reading the latest data: a timer per render kept the previous page's data and reported it too.
  const state = (tab().lead ??= { sent: null, quietUntil: 0, timer: null, seen: null, since: 0 });
  state.data = data;
  state.send = setStateValue;
  if (data.resend) state.sent = null;            // follow-me switched on again: say where we are
  if (!state.listening) {
    // A click or Enter starts a run of its own (another page, Share): a report sent now would be merged
    // into it by the server and cancel a page switch. Stay quiet; the next page reports itself. A press in
    // a view the browser answers (the player's Next, a stage, the explorer) starts no run: the step it
    // makes is reported at once (hushed, every clicked step reached the room a second late).
    state.listening = true;
    const inView = (node) => !!node && liveViews().some((v) => holds(v, node));
    const hush = (node) => { if (!inView(node)) state.quietUntil = performance.now() + 1000; };
    document.addEventListener("pointerdown", (e) => hush(e.target), true);
    onKeys("hush", (e) => {                      // assets/common/keys.js; the Enter goes on
      if (e.key === "Enter") hush(document.activeElement);
      return false;
    });
  }
  const view = () => {
    const own = new Set(state.data.own);
    const query = readAddress();
    for (const name of [...query.keys()]) if (own.has(name)) query.delete(name);
    query.sort();
    return `${state.data.page}?${query}`;
  };
  if (!state.timer) {
    state.timer = setInterval(() => {
      const now = view();
      if (now !== state.seen) { state.seen = now; state.since = performance.now(); return; }
      if (performance.now() < state.quietUntil) return;
      if (now !== state.sent && performance.now() - state.since >= state.data.settleMs) {
        state.sent = now;
        state.send("view", now);
      }
    }, 50);
  }
  return () => { clearInterval(state.timer); state.timer = null; };
}
