// The presenter's clicker on the teacher's room: a clicker is a keyboard that sends PageDown / PageUp
// (some send → / ←, and B or "." to blank the screen). On the room those keys run the class: next
// question, back, blank. Never a scroll: the keys are taken (preventDefault) before the page sees them.
// Next and back go to Python as a trigger, {go: "next" | "back", round: the round the room showed}, so a
// press delivered twice or read against a newer round moves nothing; the blank screen is drawn here, no run.
// Built by app_pages/_support/pack.py's component_js: the keys come through assets/common/keys.js (its one
// listener and its typing rule), and the clicker's state lives in the tab's one object (tab().clicker).

const KEYS = { PageDown: "next", ArrowRight: "next", PageUp: "back", ArrowLeft: "back", b: "blank", B: "blank",
               ".": "blank" };

// Arrows also move a focused tab, slider or radio (a demo on the room's page); a clicker's PageDown/PageUp
// still run the room there, so a tab the teacher clicked never silences the clicker.
const ARROW_CONTROLS = '[role="tab"], [role="tablist"], [role="slider"], [role="radio"], [role="radiogroup"], '
  + 'input[type="range"], input[type="radio"]';

// What the room does on `event` (null: nothing, the key is not the room's). A key pressed while typing or
// choosing (keys.js's typing: the question picker, a text box) is that control's.
export function action(event, { typing = false } = {}) {
  if (event.ctrlKey || event.altKey || event.metaKey || typing) return null;
  if (event.key.startsWith("Arrow") && event.target?.closest?.(ARROW_CONTROLS)) return null;
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

// The room's key handler (keys.js's onKeys): true when the key was the room's, so no page scrolls.
export function onKey(event, state, context = {}) {
  const what = action(event, context);
  if (!what) return false;
  if (event.repeat) return true;               // a held key moves once
  const doc = state.doc;
  const blanked = Boolean(doc.getElementById("gdn-live-blank"));
  if (what === "blank") {
    blank(doc, !blanked);
    return true;
  }
  blank(doc, false);
  state.send("key", { go: what, round: state.round });
  return true;
}

export default function ({ data, setTriggerValue }) {
  // One handler per tab, reading the latest trigger: the room's fragment draws this component again after
  // every click, and a handler per draw would send each key twice.
  const state = (tab().clicker ??= { doc: document });
  state.send = setTriggerValue;
  state.round = data ? data.round : null;
  onKeys("clicker", (event, context) => onKey(event, state, context));
  return () => {
    offKeys("clicker");
    blank(state.doc, false);
  };
}
