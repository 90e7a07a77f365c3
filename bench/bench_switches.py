"""Bench: compare's variant switch and the real model's layer switch -> painted, timed in the browser, on
this checkout and on an older one (the rerun path) in the same run.

Each switch is a click made inside the page: performance.now() just before it, then every animation frame
checks whether the figure shows the new choice (compare: the player's figure markup changed; real model:
the gates' titles name the new layer); the stamp of the frame after that is the time to painted. Before a
switch the page is settled. The two checkouts run side by side, each on its own server, taking turns.

    git worktree add --detach /tmp/gdn-before <older commit>     # e.g. the commit before the change
    python bench/bench_switches.py --before /tmp/gdn-before [--rounds 6] [--lang en]
Without --before only this checkout is measured.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from devtools.app_server import launch_chromium, start_server, wait_for_app, wait_until_settled  # noqa: E402

TIMED = """async ({click, option, done, arg}) => {
  // click: a CSS selector, or {text, within} for a button found by its text; option: a role=option text
  const find = (c) => typeof c === 'string' ? document.querySelector(c)
    : [...document.querySelectorAll(c.within)].find(b => b.innerText.trim() === c.text);
  const ready = new Function('arg', 'return (' + done + ')(arg)');
  const target = option ? [...document.querySelectorAll('[role="option"]')].find(o => o.innerText.trim() === option)
                        : find(click);
  if (!target) return -1;
  const t0 = performance.now();
  target.click();
  return await new Promise((resolve) => {
    const loop = () => ready(arg) ? requestAnimationFrame(() => resolve(performance.now() - t0))
      : performance.now() - t0 > 30000 ? resolve(-2) : requestAnimationFrame(loop);
    requestAnimationFrame(loop);
  });
}"""
FIGURE_CHANGED = """(before) => {
  const f = document.querySelector('.gdn-player-figure'); return f && f.innerHTML && f.innerHTML !== before; }"""
LAYER_SHOWN = """(title) => [...document.querySelectorAll('.rm-gates tr.title th')]
  .some(th => th.offsetParent && th.innerText.includes(title))"""


def compare_switch(page, new: bool, name: str, label: str) -> float:
    before = page.inner_html(".gdn-player-figure")
    click = f'.gdn-variant[data-variant="{name}"]' if new else {"text": label, "within": '[data-testid="stButtonGroup"] button'}
    ms = page.evaluate(TIMED, {"click": click, "option": None, "done": FIGURE_CHANGED, "arg": before})
    wait_for_app(page, chart=False)
    return ms


def layer_switch(page, new: bool, layer: int, label: str, title: str) -> float:
    """title: the α panel's title for that layer (what shows the switch is painted)."""
    if new:
        ms = page.evaluate(TIMED, {"click": f'.gdn-swap-btn[data-value="{layer}"]', "option": None, "done": LAYER_SHOWN, "arg": title})
    else:
        page.click('.st-key-real_model_layer [role="combobox"]')                # open the list (not timed)
        page.wait_for_selector('[role="option"]')
        ms = page.evaluate(TIMED, {"click": None, "option": label, "done": LAYER_SHOWN, "arg": title})
    wait_for_app(page, chart=False)
    wait_until_settled(page)
    return ms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="an older checkout (the rerun path) to measure in the same run")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--lang", default="en")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from gdn.i18n import t
    roots = {"now": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    with contextlib.ExitStack() as stack, sync_playwright() as p:
        urls = {name: stack.enter_context(start_server(root=root))[0] for name, root in roots.items()}
        browser = launch_chromium(p)
        results = {(name, what): [] for name in roots for what in ("variant", "layer")}
        pages = {}
        for name, url in urls.items():
            for what, path in (("variant", "compare"), ("layer", "real_model")):
                page = browser.new_page(viewport={"width": 1440, "height": 900})
                page.goto(f"{url}/{path}?lang={args.lang}")
                wait_for_app(page, 120_000)
                pages[name, what] = page
        variants = [("kda", t("compare.variant_kda", args.lang)), ("rules", t("compare.variant_rules", args.lang))]
        layers = [(i, t("real_model.layer_n", args.lang, i=i, n=4), t("real_model.heatmap_alpha", args.lang, layer=i))
                  for i in (3, 1)]
        for r in range(args.rounds):
            for name in roots:
                new = name == "now"
                results[name, "variant"].append(compare_switch(pages[name, "variant"], new, *variants[r % 2]))
                results[name, "layer"].append(layer_switch(pages[name, "layer"], new, *layers[r % 2]))
        browser.close()
    for (name, what), ms in results.items():
        print(f"{what:8s} {name:7s} p50 {statistics.median(ms):7.1f} ms  min {min(ms):7.1f}  max {max(ms):7.1f}  "
              f"({', '.join(f'{x:.0f}' for x in ms)})")


if __name__ == "__main__":
    main()
