"""Bench: key press or slider change -> updated figure painted, in headless Chromium, vs a trivial page.

Each page's main interaction is timed in the browser: a capturing keydown listener stamps the press,
then every animation frame checks whether any Plotly chart's data object was replaced (Plotly.react
swaps it when a figure updates) or any HTML figure (.gdn-figure) has new markup; the stamp of the frame
after a change is when the new figure was on screen. The wait ends after 0.6 s without changes, and the
last change counts (a page may redraw
several charts). The peer is bench/trivial_page.py (one slider, one Plotly chart) on its own server,
measured in the same rounds: pages take turns with it, one interaction each.

    python bench/bench_browser.py [--rounds 10] [--server-cpus 0] [--browser-cpus 1] [--threads N]
    python bench/bench_browser.py --smoke [--url URL]   # 1 round, two pages (tests/test_bench_smoke.py runs it
                                                        # on the tests' shared app server)
    python bench/bench_browser.py --lecture 1920x1080 [--only memory_table,cost]   # lecture mode on a projector
                                                        # (the app's pages at that screen, the trivial page too)
Goals (docs/architecture.md, Quality bars): p50 of every page <= 1.5x the trivial page's p50; the stepping pages (memory table,
compare: the frame player answers in the browser) and the explorer's sliders (start, the playground's overwrite,
half-life and repeated-writes toys, the 2-D write) <= 0.4x, sending no websocket message per press.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from devtools.app_server import IDLE, launch_chromium, open_page, start_server  # noqa: E402

WATCH = """() => {
  if (window.__bench) return;
  const s = window.__bench = {armed: false, t0: null, changes: [], running: false};
  // the press is stamped by STAMP (an init script): it must run before the page's own window listeners,
  // and the frame player stops a key it handles from reaching any later one
  // a Plotly chart changes when Plotly.react swaps its data object; an HTML figure (.gdn-figure, e.g. the
  // memory page's tables) when its markup changes
  const snap = () => new Map([...document.querySelectorAll('.js-plotly-plot, .gdn-figure')].map(
      p => [p, p.classList.contains('gdn-figure') ? p.innerHTML : p.data]));
  s.arm = () => {
    s.seen = snap(); s.changes = []; s.t0 = null; s.armed = true; s.running = true;
    const loop = () => {
      const now = snap();
      let changed = false;
      now.forEach((d, p) => { if (s.seen.get(p) !== d) changed = true; });
      if (changed) { s.seen = now; requestAnimationFrame(() => s.changes.push(performance.now())); }
      if (s.running) requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
  };
}"""
STAMP = """window.addEventListener('keydown', () => { const s = window.__bench;
  if (s && s.armed) { s.t0 = performance.now(); s.armed = false; } }, true);"""
SETTLED = """(quiet) => { const s = window.__bench;
  return s.t0 !== null && s.changes.length > 0 && performance.now() - s.changes[s.changes.length - 1] > quiet
         && IDLE_NOW; }""".replace("IDLE_NOW", IDLE)
RESULT = "() => { const s = window.__bench; s.running = false; return [s.changes[0] - s.t0, s.changes[s.changes.length - 1] - s.t0]; }"


class Case:
    """One page and its main interaction: `focus` is a CSS selector to click or focus first (None: the
    page heading, so a keyboard shortcut goes to the page), `keys` the presses forward / back."""

    def __init__(self, name, path, focus=None, keys=("ArrowRight", "ArrowLeft"), steps=4, select=False):
        self.name, self.path, self.focus, self.keys, self.steps, self.select = name, path, focus, keys, steps, select
        self.n = 0

    def key(self) -> str:
        """Walk `steps` presses forward, then as many back, and again: visits the same few values."""
        k = self.keys[(self.n // self.steps) % 2]
        self.n += 1
        return k

    def act(self, page) -> None:
        if self.select:                    # a selectbox: open it, move one option, pick it with Enter
            page.locator(self.focus).click()
            page.keyboard.press(self.key())
            page.evaluate("window.__bench.arm()")
            page.keyboard.press("Enter")
            return
        if self.focus is None:
            page.locator("h1").first.click()
        else:
            page.locator(self.focus).first.focus()
        page.evaluate("window.__bench.arm()")
        page.keyboard.press(self.key())


def slider(key: str) -> str:
    return f".st-key-{key} input[type='range']"


CASES = [
    Case("trivial", None, slider("trivial_f")),
    Case("memory_table (next/prev key)", "memory_table?lang=en"),
    # the explorer's toys and the start page's first figure answer in the browser (app_pages/_support/explorer.py)
    Case("playground_overwrite (beta slider)", "playground?lang=en", ".gdn-x-playground_overwrite_beta",
         ("ArrowLeft", "ArrowRight")),
    Case("playground_halflife (alpha slider)", "playground?lang=en&playground_panel=halflife",
         ".gdn-x-playground_halflife_alpha", ("ArrowLeft", "ArrowRight")),
    Case("playground_repeat (beta slider)", "playground?lang=en&playground_panel=repeat",
         ".gdn-x-playground_repeat_beta", ("ArrowLeft", "ArrowRight")),
    Case("playground_2d (angle between the keys)", "playground?lang=en&playground_panel=halflife",
         ".gdn-x-playground_delta2d_between", ("ArrowLeft", "ArrowRight")),
    Case("start (T slider)", "start?lang=en", ".gdn-x-start_T"),
    Case("compare (next/prev key)", "compare?lang=en"),
    Case("chunking (token slider)", "chunking?lang=en", slider("chunking_t")),
    Case("cost (context slider)", "cost?lang=en", slider("cost_T"), ("ArrowLeft", "ArrowRight"), steps=3),
    # the layer, not the head: the default view's heatmaps show every head of one layer, so a head change
    # redraws no chart
    Case("real_model (layer)", "real_model?lang=en", ".st-key-real_model_layer input[role='combobox']",
         ("ArrowDown", "ArrowUp"), steps=2, select=True),
]


def measure(page, case: Case, timeout_ms: int = 60_000) -> tuple[float, float]:
    """(first change, last change) in ms after the key press."""
    case.act(page)
    try:
        page.wait_for_function(SETTLED, arg=600, timeout=timeout_ms, polling=100)
    except Exception:
        state = page.evaluate("() => [window.__bench.t0, window.__bench.changes.length]")
        sys.exit(f"{case.name}: no figure change within {timeout_ms / 1000:.0f} s (key stamp, changes: {state})")
    return tuple(page.evaluate(RESULT))


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--server-cpus", help="taskset CPU list for both servers, e.g. 0")
    ap.add_argument("--browser-cpus", help="taskset CPU list for Chromium, e.g. 1")
    ap.add_argument("--threads", type=int, help="OMP_NUM_THREADS for the app server (default: app.py's choice)")
    ap.add_argument("--only", help="comma-separated page names (the trivial page is always measured)")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--lecture", metavar="WxH", help="the pages in lecture mode at this screen (e.g. 1920x1080: drawn "
                                                     "1.5x larger than at 1280x720) instead of 1440x900")
    ap.add_argument("--url", help="the app already served there (e.g. the tests' server) instead of one started "
                                  "here; --server-cpus then places the trivial page's server only")
    args = ap.parse_args()
    if args.url and args.threads:
        ap.error("--threads sets the app server's threads: not with --url (a server started elsewhere)")
    cases = CASES[:2] if args.smoke else [c for c in CASES if not args.only or c.name == "trivial"
                                          or c.name.split()[0] in args.only.split(",")]
    rounds = 1 if args.smoke else args.rounds
    width, height = map(int, args.lecture.split("x")) if args.lecture else (1440, 900)
    prefix = ("taskset", "-c", args.server_cpus) if args.server_cpus else ()
    env = {"OMP_NUM_THREADS": str(args.threads)} if args.threads else {}
    from playwright.sync_api import sync_playwright
    with contextlib.ExitStack() as stack:
        app = args.url.rstrip("/") if args.url else stack.enter_context(start_server(prefix=prefix, env=env))[0]
        peer, _ = stack.enter_context(start_server(prefix=prefix, script="bench/trivial_page.py"))
        pw = stack.enter_context(sync_playwright())
        if args.browser_cpus:     # Chromium's processes inherit the launcher's CPU set
            import os
            os.sched_setaffinity(0, {int(c) for c in args.browser_cpus.split(",")})
        browser = launch_chromium(pw)
        pages = {}
        sent = {}
        for case in cases:
            page = browser.new_page()
            page.add_init_script(STAMP)
            sent[case.name] = counter = [0]
            page.on("websocket", lambda ws, c=counter: ws.on("framesent", lambda _: c.__setitem__(0, c[0] + 1)))
            url = peer if case.path is None else f"{app}/{case.path}{'&mode=lecture' if args.lecture else ''}"
            open_page(page, url, width=width, height=height)
            page.evaluate(WATCH)
            measure(page, case)                                          # warm-up: first rerun, caches
            pages[case.name] = page
        times: dict[str, list[tuple[float, float]]] = {c.name: [] for c in cases}
        before = {name: c[0] for name, c in sent.items()}
        for r in range(rounds):
            for case in cases if r % 2 == 0 else cases[::-1]:
                times[case.name].append(measure(pages[case.name], case))
        messages = {name: (c[0] - before[name]) / rounds for name, c in sent.items()}
        browser.close()
    print(f"key press / slider -> figure painted, {rounds} rounds, pages alternate with the trivial page "
          f"(servers on CPUs {args.server_cpus or 'any'}, browser on {args.browser_cpus or 'any'}; "
          f"{'lecture mode at ' + args.lecture if args.lecture else '1440x900'})")
    base = statistics.median(last for _, last in times["trivial"])
    for name, ts in times.items():
        last = [t for _, t in ts]
        first = [t for t, _ in ts]
        print(f"  {name:32s} p50 {statistics.median(last):6.0f} ms  p95 {pct(last, 0.95):6.0f} ms  "
              f"(first chart {statistics.median(first):5.0f} ms; min {min(last):5.0f}, max {max(last):5.0f}; "
              f"{messages[name]:.1f} messages sent per press)")
    for name, ts in times.items():
        if name != "trivial":
            goal = "0.4x" if name.startswith(("memory_table", "compare", "start", "playground_")) else "1.5x"
            print(f"ratio browser {name}: page p50 / trivial p50 = {statistics.median(t for _, t in ts) / base:.2f}x "
                  f"(goal <= {goal})")


if __name__ == "__main__":
    main()
