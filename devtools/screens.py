"""Screenshots of every page at the three screens a class uses (1440x900; lecture mode at 1920x1080 and
1280x720), in Chinese and in English: one server, one browser, one page reused.

    python -m devtools.screens OUT_DIR [--pages memory_table,cost] [--screens 1280x720] [--langs zh] [--full]

Each file is OUT_DIR/<page>[-<view>]-<lang>-<W>x<H>.png; --full adds the whole page below the first screen.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from app_pages._support.path import PATH
from devtools.app_server import REAL_MODEL_READY, app_server, launch_chromium, wait_for_app

SCREENS = {"1440x900": "", "1920x1080": "&mode=lecture", "1280x720": "&mode=lecture"}
# Views a page opens through its link (a segmented control linked to the URL): shot besides the default.
VIEWS = {"playground": [("playground_panel", v) for v in ("repeat", "knorm", "capacity", "halflife")],
         "compare": [("compare_variant", v) for v in ("beta_channel", "kda", "stream")],
         "real_model": [("real_model_view", v) for v in ("intervene", "check", "head", "replay", "export")]}
# Views that draw no figure until the learner acts (or never): the wait is for the page, not a chart.
NO_CHART = {"classroom", "practice", "real_model-intervene", "real_model-check", "real_model-replay", "real_model-export"}


def shots(pages: list[str], with_views: bool):
    """(name, page address, extra query) of every page's default view and, with_views, its linked views."""
    for stop in PATH:
        if pages and stop.url_path not in pages:
            continue
        yield stop.url_path, stop.address, ""
        for key, value in VIEWS.get(stop.url_path, []) if with_views else ():
            yield f"{stop.url_path}-{value}", stop.address, f"&{key}={value}"


def main() -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--pages", default="", help="comma-separated page addresses (default: every page)")
    ap.add_argument("--screens", default=",".join(SCREENS))
    ap.add_argument("--langs", default="zh,en")
    ap.add_argument("--views", action="store_true", help="also every linked view of a page")
    ap.add_argument("--full", action="store_true", help="also the whole page")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    pages = [p for p in args.pages.split(",") if p]
    with app_server() as base, sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page()
        for size in args.screens.split(","):
            w, h = map(int, size.split("x"))
            page.set_viewport_size({"width": w, "height": h})
            for name, address, query in shots(pages, args.views):
                for lang in args.langs.split(","):
                    page.goto(f"{base}/{address}?lang={lang}{SCREENS[size]}{query}")
                    view = name.removeprefix("real_model-") if name.startswith("real_model-") else None
                    if view in REAL_MODEL_READY:                 # its forward pass is done
                        page.wait_for_selector(REAL_MODEL_READY[view], timeout=120_000)
                    wait_for_app(page, chart=name not in NO_CHART)
                    out = args.out / f"{name}-{lang}-{size}.png"
                    page.screenshot(path=out)
                    if args.full:
                        page.screenshot(path=out.with_name(out.stem + "-full.png"), full_page=True)
                    print("saved", out, flush=True)
        browser.close()


if __name__ == "__main__":
    main()
