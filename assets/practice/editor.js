// The practice page's code editor (app_pages/_practice.py): a plain textarea with a line-number gutter,
// Tab / Shift+Tab indenting, Ctrl+Enter (⌘+Enter) running the tests, and the learner's code kept in this
// browser's localStorage per exercise, so a reload or a new session opens it again. Python sends the
// exercise, its starter file and the words; the code goes to Python only when the learner runs it.
// Assembled by pack.py's component_js: addStyle comes from assets/common/pack.js, EDITOR_CSS is
// assets/practice/editor.css.

const PREFIX = "gdn.practice.code.";
const INDENT = "    ";

export function storedCode(storage, exercise, stub) {
  const kept = storage.getItem(PREFIX + exercise);
  return kept === null ? stub : kept;
}

// Indent (or, with outdent, remove one indent from) every line the selection [start, end) touches; a caret
// with no selection gets four spaces. Returns the new text and selection.
export function indent(text, start, end, outdent = false) {
  if (start === end && !outdent) {
    return { text: text.slice(0, start) + INDENT + text.slice(end), start: start + 4, end: start + 4 };
  }
  const first = text.lastIndexOf("\n", start - 1) + 1;
  const lines = text.slice(first, end).split("\n");
  let removedFirst = 0, changed = 0;
  const moved = lines.map((line, i) => {
    if (!outdent) { changed += 4; return INDENT + line; }
    const cut = line.match(/^ {1,4}/)?.[0].length ?? 0;
    if (i === 0) removedFirst = cut;
    changed -= cut;
    return line.slice(cut);
  });
  const block = moved.join("\n");
  const shift = outdent ? -Math.min(removedFirst, start - first) : 4;
  return { text: text.slice(0, first) + block + text.slice(end), start: Math.max(first, start + shift),
           end: end + changed };
}

function lineNumbers(text) {
  const n = text.split("\n").length;
  return Array.from({ length: n }, (_, i) => i + 1).join("\n");
}

function build(host, data, send) {
  host.innerHTML = "";
  // el(tag, class, parent): assets/common/pack.js
  const root = el("div", "gdn-editor" + (data.lecture ? " gdn-editor-lecture" : ""), host);
  root.dataset.exercise = data.exercise;
  const label = el("label", "gdn-editor-label", root);
  label.textContent = data.words.label;
  const bar = el("div", "gdn-editor-bar", root);      // Run above the code: on a projector's first screen
  const button = (className, text) => {
    const b = el("button", className, bar);
    b.type = "button";
    b.textContent = text;
    return b;
  };
  const run = button("gdn-editor-run", "▶ " + data.words.run);
  const reset = button("gdn-editor-reset", data.words.reset);
  const frame = el("div", "gdn-editor-frame", root);
  const gutter = el("pre", "gdn-editor-gutter", frame);
  gutter.setAttribute("aria-hidden", "true");
  const area = el("textarea", "gdn-editor-code", frame);
  area.id = "gdn-editor-" + data.exercise;
  area.spellcheck = false;
  for (const [name, value] of [["autocapitalize", "off"], ["autocomplete", "off"], ["wrap", "off"]]) {
    area.setAttribute(name, value);
  }
  label.htmlFor = area.id;
  area.value = storedCode(window.localStorage, data.exercise, data.stub);
  el("div", "gdn-editor-help", root).textContent = data.words.help;

  // A projector shows as many lines of the lecture font (29 px each at 1280x720, more on a larger screen:
  // lecture.css's --gdn-px) as fit between where the code starts and the window's bottom, less the help under
  // it (two lines in zh, 100 px at 1280x720): read once, as the editor is first drawn.
  const line = parseFloat(window.getComputedStyle?.(area).lineHeight) || 29;
  const below = (window.innerHeight || 720) - area.getBoundingClientRect().top - 100 * line / 29;
  const lectureRows = Math.max(8, Math.floor(below / line));
  const state = { area, gutter, run, root, disabled: false };
  const redraw = () => {
    gutter.textContent = lineNumbers(area.value);
    const most = data.lecture ? lectureRows : 30;
    area.rows = Math.min(most, Math.max(10, area.value.split("\n").length + 1));
  };
  let saving = 0;
  const save = () => {
    clearTimeout(saving);
    saving = setTimeout(() => window.localStorage.setItem(PREFIX + data.exercise, area.value), 200);
  };
  const submit = () => {
    if (state.disabled) return;
    window.localStorage.setItem(PREFIX + data.exercise, area.value);
    send("run", { code: area.value, at: Date.now() });
  };
  area.addEventListener("input", () => { redraw(); save(); });
  area.addEventListener("scroll", () => { gutter.scrollTop = area.scrollTop; });
  area.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      submit();
    } else if (event.key === "Tab" && !event.altKey && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();
      const done = indent(area.value, area.selectionStart, area.selectionEnd, event.shiftKey);
      area.value = done.text;
      area.setSelectionRange(done.start, done.end);
      redraw();
      save();
    } else if (event.key === "Escape") {
      area.blur();                 // Tab is taken inside the editor: Escape lets the keyboard leave it
    }
  });
  run.addEventListener("click", submit);
  reset.addEventListener("click", () => {
    window.localStorage.setItem(PREFIX + data.exercise + ".before_reset", area.value);
    area.value = data.stub;
    window.localStorage.setItem(PREFIX + data.exercise, area.value);
    redraw();
  });
  redraw();
  return state;
}

export default function ({ data, parentElement, setTriggerValue }) {
  addStyle("gdn-practice-editor-css", EDITOR_CSS);
  let state = parentElement.gdnEditor;
  if (!state || !state.root.isConnected || state.root.dataset.exercise !== data.exercise
      || state.root.classList.contains("gdn-editor-lecture") !== Boolean(data.lecture)) {
    state = parentElement.gdnEditor = build(parentElement, data, setTriggerValue);
  }
  state.disabled = Boolean(data.disabled);
  state.run.disabled = state.disabled;
}
