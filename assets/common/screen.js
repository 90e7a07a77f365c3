// Lecture mode's scale (app_pages/_support/screen.py): a screen larger than 1280x720 shows what 1280x720
// shows, proportionally larger. The CSS scales itself (assets/lecture.css, --gdn-px); the Plotly charts are
// drawn by Python at the scale this component reports: on its mount when Python drew at another one, and
// after the window is resized (a laptop's window dragged onto the projector). The scale is kept in a
// cookie too, so the next session of this browser draws at it from its first run.
//
// The page's root element says both: data-gdn-scale-drawn (Python's) and data-gdn-scale-want (this
// screen's); a test waits until they agree (devtools/app_server.py, SETTLED).

export const COOKIE = "gdn_scale";
const STEPS = 8;            // eighths: 1920x1080 is 1.5, 2560x1440 is 2, 1366x768 stays 1
const MAX = 3;              // 3840x2160
const SETTLE_MS = 250;      // a resize by dragging sends one report, when it stops

// The scale of a width x height screen: how many times 1280x720 fits, in eighths, rounded down (a
// figure a little small still fits), never under 1 (a smaller screen keeps 1280x720's sizes).
export function scaleOf(width, height) {
  const s = Math.floor(Math.min(width / 1280, height / 720) * STEPS) / STEPS;
  return Math.min(MAX, Math.max(1, Number.isFinite(s) ? s : 1));
}

let mounted = null;         // {drawn, send} of the mounted component; null while lecture mode is off
let timer = null;
const heard = new WeakSet(); // the windows with a resize listener: one each, whichever mount is the latest

function report(win) {
  if (!mounted) return;
  const want = scaleOf(win.innerWidth, win.innerHeight);
  win.document.documentElement.dataset.gdnScaleWant = String(want);
  win.document.cookie = `${COOKIE}=${want}; path=/; max-age=31536000; SameSite=Lax`;
  if (want !== mounted.drawn) mounted.send("scale", want);
}

export default function (component) {
  const { data, setStateValue } = component;
  const win = window;
  mounted = { drawn: Number(data.drawn), send: setStateValue };
  win.document.documentElement.dataset.gdnScaleDrawn = String(mounted.drawn);
  report(win);
  if (!heard.has(win)) {
    heard.add(win);
    win.addEventListener("resize", () => {
      if (!mounted) return;
      win.document.documentElement.dataset.gdnScaleWant = String(scaleOf(win.innerWidth, win.innerHeight));
      clearTimeout(timer);
      timer = setTimeout(() => report(win), SETTLE_MS);
    });
  }
  return () => {                        // lecture mode off: nothing to report, nothing to wait for
    mounted = null;
    delete win.document.documentElement.dataset.gdnScaleDrawn;
    delete win.document.documentElement.dataset.gdnScaleWant;
  };
}
