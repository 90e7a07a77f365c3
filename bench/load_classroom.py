"""Load test: a class opens one link at once. N browser sessions step through the memory page while
R of them run the real-model page with prompts of their own; the server runs on its own CPUs.

    python bench/load_classroom.py --sessions 10 --real 5 --server-cpus 0 --browser-cpus 1
    python bench/load_classroom.py --sessions 30 --real 5 --server-cpus 0,1 --browser-cpus 2-15   # a 16-core box

Reports, for the memory sessions, time to the first painted figure and key press -> next step shown
(p50 / p95 over all presses), for the real-model sessions time to their heatmap and whether they were
told their place in line, the errors any page showed, and the server's peak RSS. One real-model
browser is closed in the middle of its run: the others must still finish (its slot is given back).
Only 127.0.0.1; bounded in sessions (<= 40) and time (--timeout).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devtools.app_server import CHROMIUM_FLAGS, start_server

MEMORY = "/memory_table?lang=en&memory_preset=k1_update"
REAL = "/real_model?lang=en"
STEPS = 6


def percentile(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def process_tree(pid: int) -> list[int]:
    """pid and all its descendants, from every process's parent in /proc (threads' children included)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    tree, stack = [], [pid]
    while stack:
        p = stack.pop()
        tree.append(p)
        stack += children.get(p, [])
    return tree


def cpu_of_tree(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process and its descendants."""
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for p in process_tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError):
            pass
    return total


def rss_of_tree(pid: int) -> int:
    """Resident bytes of a process and its descendants."""
    total = 0
    for p in process_tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS"))
        except (OSError, StopIteration):
            pass
    return total


async def memory_session(browser, base: str, out: dict) -> None:
    context = await browser.new_context(viewport={"width": 1440, "height": 900})
    page = await context.new_page()
    start = time.perf_counter()
    await page.goto(base + MEMORY)
    await page.wait_for_selector(".js-plotly-plot", timeout=out["timeout_ms"])
    out["first"].append(time.perf_counter() - start)
    caption = page.get_by_text(re.compile(r"^Step \d+ of \d+")).first     # the stepper's "Step k of n"
    for _ in range(STEPS):
        before = await caption.inner_text()
        t0 = time.perf_counter()
        await page.keyboard.press("ArrowRight")
        await page.wait_for_function("(b) => !document.body.innerText.includes(b)", arg=before,
                                     timeout=out["timeout_ms"])
        out["step"].append(time.perf_counter() - t0)
    out["errors"] += await page.locator('[data-testid="stException"]').count()
    await context.close()


async def real_session(browser, base: str, i: int, out: dict, abandon: bool) -> None:
    context = await browser.new_context(viewport={"width": 1440, "height": 900})
    page = await context.new_page()
    start = time.perf_counter()
    await page.goto(base + REAL)
    await page.wait_for_selector(".rm-gates", timeout=out["timeout_ms"])
    area = page.locator("textarea").first
    await area.fill(out["prompt"](i))                 # a prompt of its own: nothing to share
    await area.press("Tab")
    t0 = time.perf_counter()
    await page.get_by_role("button", name="Run").click()
    if abandon:                                       # a student closes the tab while the run is queued
        await asyncio.sleep(0.5)
        await context.close()
        out["abandoned"] += 1
        return
    done = f"{out['n_tokens'][i]} tokens through"                 # the caption of this prompt's finished run
    saw_line = False
    while True:
        text = await page.inner_text("body")
        saw_line |= "in line" in text
        if done in text:
            break
        if time.perf_counter() - t0 > out["timeout_ms"] / 1000:
            raise TimeoutError("no heatmap")
        await asyncio.sleep(0.2)
    out["real"].append(time.perf_counter() - t0)
    out["told_line"] += saw_line
    out["errors"] += await page.locator('[data-testid="stException"]').count()
    out["first_real"].append(t0 - start)
    await context.close()


async def run(base: str, sessions: int, real: int, timeout_s: float) -> dict:
    from playwright.async_api import async_playwright

    from gdn.qwen35 import load_tokenizer
    from gdn.qwen35.sources import TRAINED_PATH
    tok = load_tokenizer(TRAINED_PATH)
    prompt = lambda i: f"the tiger is red . session {i} asks : ask tiger ? " * (20 + i)
    out = {"first": [], "step": [], "real": [], "first_real": [], "errors": 0, "told_line": 0, "abandoned": 0,
           "failed": [], "timeout_ms": int(timeout_s * 1000), "prompt": prompt,
           "n_tokens": [len(tok.encode(prompt(i), max_tokens=512).ids) for i in range(real)]}
    async with async_playwright() as p:
        # Every student has a visible tab of their own: without these flags, Chromium throttles the timers
        # and animation frames of all but one of the pages this one browser holds, and the wait is the browser's.
        unthrottled = ["--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                       "--disable-backgrounding-occluded-windows"]
        browser = await p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_FLAGS + unthrottled)
        tasks = [memory_session(browser, base, out) for _ in range(sessions - real)]
        tasks += [real_session(browser, base, i, out, abandon=i == 0) for i in range(real)]
        for result in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(result, Exception):
                out["failed"].append(f"{type(result).__name__}: {str(result)[:120]}")
        await browser.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--real", type=int, default=5, help="how many of the sessions run the real-model page")
    ap.add_argument("--server-cpus", default="0", help="taskset CPU list for the server")
    ap.add_argument("--browser-cpus", default="1", help="taskset CPU list for this script and its browsers")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds any one wait may take")
    a = ap.parse_args()
    if not 1 <= a.sessions <= 40 or not 0 <= a.real <= a.sessions:
        ap.error("1 <= sessions <= 40 and 0 <= real <= sessions")
    os.sched_setaffinity(0, parse_cpus(a.browser_cpus))
    with start_server(prefix=("taskset", "-c", a.server_cpus)) as (base, proc):
        pid = proc.pid
        peak, stop = [rss_of_tree(pid)], threading.Event()

        def sample():
            while not stop.wait(0.5):
                peak.append(rss_of_tree(pid))
        threading.Thread(target=sample, daemon=True).start()
        t0, server_cpu0, own_cpu0 = time.perf_counter(), cpu_of_tree(pid), cpu_of_tree(os.getpid()) - cpu_of_tree(pid)
        out = asyncio.run(run(base, a.sessions, a.real, a.timeout))
        stop.set()
        wall = time.perf_counter() - t0
        server_cpu = cpu_of_tree(pid) - server_cpu0
        browser_cpu = cpu_of_tree(os.getpid()) - cpu_of_tree(pid) - own_cpu0
    f = lambda xs: f"p50 {percentile(xs, 50):.2f} s, p95 {percentile(xs, 95):.2f} s (n={len(xs)})"
    print(f"sessions {a.sessions} ({a.real} real-model, 1 of them abandoned), server CPUs {a.server_cpus}, "
          f"browser CPUs {a.browser_cpus}, wall {wall:.0f} s")
    print(f"  memory page, first figure:   {f(out['first'])}")
    print(f"  memory page, key -> step:    {f(out['step'])}")
    print(f"  real model, Run -> heatmap:  {f(out['real'])}; told their place in line: {out['told_line']}")
    print(f"  page errors: {out['errors']}; failed sessions: {len(out['failed'])} {out['failed'][:3]}")
    print(f"  server peak RSS: {max(peak) / 1e9:.2f} GB; CPU seconds: server {server_cpu:.0f}, "
          f"browsers and this script {browser_cpu:.0f} (over {wall:.0f} s of wall time)")


def parse_cpus(spec: str) -> set[int]:
    cpus = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        cpus |= set(range(int(lo), int(hi or lo) + 1))
    return cpus


if __name__ == "__main__":
    main()
