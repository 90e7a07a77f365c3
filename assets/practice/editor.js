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
  const root = document.createElement("div");
  root.className = "gdn-editor" + (data.lecture ? " gdn-editor-lecture" : "");
  root.dataset.exercise = data.exercise;
  const label = document.createElement("label");
  label.className = "gdn-editor-label";
  label.textContent = data.words.label;
  const frame = document.createElement("div");
  frame.className = "gdn-editor-frame";
  const gutter = document.createElement("pre");
  gutter.className = "gdn-editor-gutter";
  gutter.setAttribute("aria-hidden", "true");
  const area = document.createElement("textarea");
  area.className = "gdn-editor-code";
  area.id = "gdn-editor-" + data.exercise;
  area.spellcheck = false;
  area.setAttribute("autocapitalize", "off");
  area.setAttribute("autocomplete", "off");
  area.setAttribute("wrap", "off");
  label.htmlFor = area.id;
  area.value = storedCode(window.localStorage, data.exercise, data.stub);
  const help = document.createElement("div");
  help.className = "gdn-editor-help";
  help.textContent = data.words.help;
  const bar = document.createElement("div");
  bar.className = "gdn-editor-bar";
  const run = document.createElement("button");
  run.type = "button";
  run.className = "gdn-editor-run";
  run.textContent = "▶ " + data.words.run;
  const reset = document.createElement("button");
  reset.type = "button";
  reset.className = "gdn-editor-reset";
  reset.textContent = data.words.reset;
  bar.append(run, reset);
  frame.append(gutter, area);
  root.append(label, bar, frame, help);         // Run above the code: on a projector's first screen however long the file
  host.append(root);

  const state = { area, gutter, run, root, disabled: false };
  const redraw = () => {
    gutter.textContent = lineNumbers(area.value);
    const most = data.lecture ? 10 : 30;         // a 720-px projector holds ten lines of the lecture font
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
