// The presenter's clicker on the teacher's room: a clicker is a keyboard that sends PageDown / PageUp
// (some send → / ←, and B or "." to blank the screen). On the room those keys run the class: next
// question, back, blank. Never a scroll: the keys are taken (preventDefault) before the page sees them.
// Next and back go to Python as a trigger, {go: "next" | "back", round: the round the room showed}, so a
// press delivered twice or read against a newer round moves nothing; the blank screen is drawn here, no run.

const KEYS = { PageDown: "next", ArrowRight: "next", PageUp: "back", ArrowLeft: "back", b: "blank", B: "blank",
               ".": "blank" };

// A key pressed while typing or choosing (the question picker, a text box) is that control's, not the room's.
const TYPING = 'input, textarea, select, [contenteditable="true"], [role="listbox"], [role="combobox"]';
// Arrows also move a focused tab, slider or radio (a demo on the room's page); a clicker's PageDown/PageUp
// still run the room there, so a tab the teacher clicked never silences the clicker.
const ARROW_CONTROLS = '[role="tab"], [role="tablist"], [role="slider"], [role="radio"], [role="radiogroup"]';

function inside(target, selector) {
  return Boolean(target && typeof target.closest === "function" && target.closest(selector));
}

export function action(event) {
  if (event.ctrlKey || event.altKey || event.metaKey || inside(event.target, TYPING)) return null;
  if (event.key.startsWith("Arrow") && inside(event.target, ARROW_CONTROLS)) return null;
  return KEYS[event.key] || null;
}

// Blank: a black sheet over the whole page; B again (or next / back) lifts it.
export function blank(doc, on) {
  let sheet = doc.getElementById("gdn-live-blank");
  if (on && !sheet) {
    sheet = doc.createElement("div");
    sheet.id = "gdn-live-blank";
    sheet.setAttribute("style", "position:fixed;inset:0;background:#000;z-index:2147483647;cursor:none");
    doc.body.appendChild(sheet);
  } else if (!on && sheet) {
    sheet.remove();
  }
  return Boolean(on);
}

export function onKey(event, state) {
  const what = action(event);
  if (!what) return;
  event.preventDefault();
  event.stopPropagation();
  if (event.repeat) return;                    // a held key moves once
  const doc = state.doc;
  const blanked = Boolean(doc.getElementById("gdn-live-blank"));
  if (what === "blank") {
    blank(doc, !blanked);
    return;
  }
  blank(doc, false);
  state.send("key", { go: what, round: state.round });
}

export default function ({ data, setTriggerValue }) {
  // One listener per tab, reading the latest trigger: the room's fragment draws this component again
  // after every click, and a listener per draw would send each key twice.
  const state = (window.__gdnClicker ??= { doc: document, handler: null });
  state.send = setTriggerValue;
  state.round = data ? data.round : null;
  if (!state.handler) {
    state.handler = (event) => onKey(event, state);
    window.addEventListener("keydown", state.handler, true);
  }
  return () => {
    window.removeEventListener("keydown", state.handler, true);
    state.handler = null;
    blank(state.doc, false);
  };
}
