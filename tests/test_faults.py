"""Fault injection (issue 27): hostile model folders on disk, a dying nginx or replica, downloads on a fresh
server, outside text drawn as Markdown, spreadsheet formulas in exports, unpaired surrogates from a tab.

Each fault is made for real (symlink loops, a config nested 100,000 deep, a 60 MB tokenizer, kill -9 of
nginx and of a replica, a busy port, a replica whose Python cannot start) and the test checks what an
operator or a student is then shown."""
from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from markdown_it import MarkdownIt
from playwright.sync_api import expect

from gdn.i18n import t
from gdn.qwen35 import DEMO_PATH, check_folder, load_model
from gdn.qwen35.analysis import describe
from gdn.qwen35.config import load_config
from gdn.qwen35.filecaps import CONFIG_MAX_BYTES, TOKENIZER_MAX_BYTES
from gdn.qwen35.gates import gates_csv
from gdn.qwen35.sources import download, folder_stamp, list_sources, listing_stamp, plan_download, scan_sources
from gdn.units import spreadsheet_cell
from app_pages._support.escape import plain, plain_fields
from app_pages._support.path import PATH
from devtools.app_server import REAL_MODEL_READY, free_port, start_server, wait_for_app
from devtools.class_server import read_until, serve
from tests.apptest import open_app
from tests.qwen35_fixtures import text_config, write_checkpoint

ROOT = Path(__file__).resolve().parents[1]
TOKENIZER = (DEMO_PATH / "tokenizer.json").read_text(encoding="utf-8")
TEXT = text_config(vocab_size=1024)             # the demo tokenizer's ids need 1,024 embedding rows


# -- 1. hostile model roots ----------------------------------------------------------------------------
def deep_config(n: int = 100_000) -> str:
    """A 200 kB config.json that names Qwen3.5 and nests 100,000 lists deep (json.loads: RecursionError)."""
    return '{"model_type": "qwen3_5", "x": ' + "[" * n + "]" * n + "}"


def hostile_folders(where) -> dict[str, Path]:
    """Checkpoint folders made by where(name) -> folder: one good, the rest hostile. Returns name -> folder."""
    made = {"good": write_checkpoint(where("good"), TEXT, tokenizer_json=TOKENIZER)}
    made["deep"] = write_checkpoint(where("deep"))
    (made["deep"] / "config.json").write_text(deep_config())
    made["big_config"] = write_checkpoint(where("big_config"))
    (made["big_config"] / "config.json").write_text(json.dumps({"model_type": "qwen3_5", "pad": "x" * CONFIG_MAX_BYTES}))
    made["loop_weights"] = write_checkpoint(where("loop_weights"))
    (made["loop_weights"] / "extra.safetensors").symlink_to("extra.safetensors")      # a link to itself
    made["loop_config"] = write_checkpoint(where("loop_config"))
    (made["loop_config"] / "config.json").unlink()
    (made["loop_config"] / "config.json").symlink_to("config.json")
    made["big_tokenizer"] = write_checkpoint(where("big_tokenizer"))
    with open(made["big_tokenizer"] / "tokenizer.json", "wb") as f:                  # sparse: 60 MB, no disk
        f.truncate(TOKENIZER_MAX_BYTES + 10_000_000)
    loop_dir = where("loop_dir")
    loop_dir.parent.mkdir(parents=True, exist_ok=True)
    loop_dir.symlink_to(loop_dir.name)                                                 # a folder that is itself
    made["loop_dir"] = loop_dir
    return made


@pytest.fixture(params=["env", "hf-cache"])
def hostile(request, tmp_path, monkeypatch):
    """The hostile folders in GDN_MODEL_DIRS, or in the Hugging Face cache layout (models--o--n/snapshots/rev)."""
    hub, env = tmp_path / "hub", tmp_path / "mine"
    hub.mkdir()
    env.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("GDN_MODEL_DIRS", str(env))
    if request.param == "env":
        return hostile_folders(lambda name: env / name)
    return hostile_folders(lambda name: hub / f"models--evil--{name}" / "snapshots" / "0123456789abcdef")


def test_hostile_roots_never_break_the_listing(hostile, monkeypatch):
    import tokenizers

    def no_parse(*args, **kwargs):
        raise AssertionError("listing or describing parsed a tokenizer.json")
    real_from_file = tokenizers.Tokenizer.from_file
    monkeypatch.setattr(tokenizers.Tokenizer, "from_file", no_parse)
    found = {s.path: s for s in scan_sources()}                         # never raises, whatever the folders hold
    at = lambda name: found.get(hostile[name])
    assert at("good").problem is None
    for name in ("deep", "big_config", "loop_weights"):
        assert at(name) is not None and at(name).problem, name             # listed, with a reason
        assert str(hostile[name].parent) not in at(name).problem           # the reason shows no server path
    assert at("loop_config") is None and at("loop_dir") is None        # no readable config.json: not a checkpoint
    assert "nested too deeply" in at("deep").problem
    assert "cap of 1 MB" in at("big_config").problem
    assert at("big_tokenizer").problem is None                          # listing never looks into a tokenizer
    assert hostile["good"] in {s.path for s in list_sources()}
    with pytest.raises(ValueError, match=r"tokenizer.json is 60\.0 MB, over this app's cap of 50 MB"):
        describe(hostile["big_tokenizer"])                              # a stat, not a 14 s parse
    for name in ("loop_dir", "loop_weights"):                           # typed in the folder box
        with pytest.raises(ValueError):
            check_folder(hostile[name])
    with pytest.raises(ValueError, match="nested too deeply"):
        load_config(hostile["deep"])
    monkeypatch.setattr(tokenizers.Tokenizer, "from_file", real_from_file)
    with pytest.raises(ValueError, match="cap"):
        load_model(hostile["big_tokenizer"])                            # picking it: refused before the parse too


def test_hostile_roots_leave_the_real_model_page_working(hostile):
    at = open_app("en", page="app_pages/real_model.py")
    assert not at.exception
    labels = [e.label for e in at.expander]
    assert t("real_model.broken", "en", n=4) in labels, labels         # deep, big_config, loop_weights, big tokenizer
    at.selectbox(key="real_model_source").set_value("__folder__").run()
    at.text_input(key="real_model_folder_edit").set_value(str(hostile["loop_dir"])).run()
    assert not at.exception
    assert at.error[0].value == t("real_model.err_unreadable", "en") and "cannot be opened" in at.code[-1].value
    at.selectbox(key="real_model_source").set_value(str(hostile["good"])).run()
    assert not at.exception and not at.error


def test_the_listing_is_reread_when_the_disk_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("GDN_MODEL_DIRS", str(tmp_path / "mine"))
    (tmp_path / "mine").mkdir()
    before = listing_stamp()
    assert listing_stamp() == before                                    # nothing changed: the cache holds
    folder = write_checkpoint(tmp_path / "mine" / "new")
    added = listing_stamp()
    assert added != before
    stamp = folder_stamp(folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "llama"}) + " " * 7)
    assert listing_stamp() != added and folder_stamp(folder) != stamp    # rewritten in place


class StagingHub:
    """huggingface_hub as the downloader sees it, serving one folder's files into whatever cache it is given."""

    def __init__(self, source: Path):
        self.source = source

    def hf_hub_download(self, *, repo_id, filename, revision, cache_dir):
        snapshot = Path(cache_dir) / f"models--{repo_id.replace('/', '--')}" / "snapshots" / "rev0"
        snapshot.mkdir(parents=True, exist_ok=True)
        (snapshot / filename).write_bytes((self.source / filename).read_bytes())
        return str(snapshot / filename)

    def HfApi(self):
        files = [type("S", (), {"rfilename": p.name, "size": p.stat().st_size})() for p in self.source.iterdir()]
        return type("Api", (), {"model_info": lambda _, *a, **k: type("I", (), {"sha": "c0ffee", "siblings": files})()})()


def test_a_download_is_checked_before_it_enters_the_cache(tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("GDN_ALLOW_DOWNLOADS", "1")
    deep = write_checkpoint(tmp_path / "deep")
    (deep / "config.json").write_text(deep_config())
    with pytest.raises(ValueError, match="nested too deeply"):
        plan_download("evil/deep", hub=StagingHub(deep))
    bad = write_checkpoint(tmp_path / "bad", TEXT, tokenizer_json=TOKENIZER)
    plan = plan_download("evil/bad", hub=StagingHub(bad))               # the config is fine...
    (bad / "model.safetensors").write_bytes(b"\xff" * 8 + b"{not a header")    # ...the weights are not
    with pytest.raises(ValueError, match="corrupt"):
        download(plan, hub=StagingHub(bad))
    assert not any(hub.iterdir())                                       # nothing entered the cache, no leftovers
    good = write_checkpoint(tmp_path / "good", TEXT, tokenizer_json=TOKENIZER)
    folder = download(plan_download("fine/good", hub=StagingHub(good)), hub=StagingHub(good))
    assert folder.parent.parent == hub / "models--fine--good" and (folder / "tokenizer.json").is_file()
    assert [p.name for p in hub.iterdir()] == ["models--fine--good"]
    assert folder in {s.path for s in list_sources()}


# -- 5. outside text is never Markdown -------------------------------------------------------------------
PAYLOADS = ["![](http://127.0.0.1:9/pixel.png)", "$\\Huge X$", "**bold**", ":red[alert] :material/home:", "\r# heading",
            "a\nb\r\nc", "<img src=x onerror=alert(1)>", "[link](http://127.0.0.1:9/)", "#tag", "&amp; &lt;", "`code`",
            "_x_ ~~s~~", "1. item", "- item", "> quote", "\\*", "| a | b |"]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_plain_text_renders_as_itself(payload):
    shown = plain(payload)
    assert not re.search(r"[\r\n\x00-\x1f]", shown)                     # one line
    for ch in "$:*[!#<>&`_|~":                                          # Streamlit's own syntax too ($ and :)
        assert shown.count("\\" + ch) == payload.count(ch), ch
    rendered = MarkdownIt("commonmark").renderInline(shown)             # CommonMark, as Streamlit's renderer
    assert "<" not in rendered.replace("&lt;", "")                      # no tag at all: no img, strong, a, h1
    assert html.unescape(rendered) == re.sub(r"[\r\n]+", " ", payload)   # the text, exactly as typed
    assert plain_fields({"text": payload, "token": 3}) == {"text": shown, "token": 3}


def test_prompt_text_in_the_replay_caption_and_a_folder_name_in_the_title(tmp_path, monkeypatch):
    name = "**bold** $x$ ![](a.png) :red[r] \r# h"          # a folder name may hold any of these (no "/")
    write_checkpoint(tmp_path / name, TEXT, tokenizer_json=TOKENIZER)
    monkeypatch.setenv("GDN_MODEL_DIRS", str(tmp_path))
    at = open_app("en", page="app_pages/real_model.py")
    at.selectbox(key="real_model_source").set_value(str(tmp_path / name)).run()
    assert not at.exception
    assert plain(name) in [*at.title, *at.subheader][0].value
    at.text_area(key="real_model_prompt_edit").set_value(" ![](http://127.0.0.1:9/b.png) $\\Huge X$ \r# h").run()
    at.button(key="real_model_run").click().run()
    at.query_params["real_model_view"] = "replay"
    at.session_state["real_model_view"] = "replay"
    at.run()
    assert not at.exception
    window = next(c.value for c in at.caption if c.value.startswith("Window"))
    shown = window[window.index("“") + 1:window.rindex("”")]           # the prompt's tokens, as the caption has them
    assert shown and not re.search(r"[\r\n]", shown)
    assert not re.search(r"(?<!\\)[$!\[\]():#*]", shown.replace("\\\\", "")), shown   # every one escaped


# -- 6. CSV exports -------------------------------------------------------------------------------------
def test_csv_text_cells_cannot_run_in_a_spreadsheet():
    tokens = ["=HYPERLINK(\"http://x\")", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx", " ok", "a=b"]
    T, H = len(tokens), 2
    g = -np.linspace(0.1, 2, T * H).reshape(T, H)                       # negative numbers stay numbers
    text = gates_csv(model="=cmd|' /C calc'!A0", layer=0, kernel="chunk", ids=list(range(T)), tokens=tokens,
                     g=g, beta=np.full((T, H), 0.5), state_norms=np.ones((T, H)))
    rows = list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        assert row["model"] == "'=cmd|' /C calc'!A0"
        assert row["token"][0] not in "=+-@\t\r"
        assert float(row["g"]) < 0 and row["g"].startswith("-")
    assert [rows[2 * i]["token"] for i in range(T)] == ["'" + x if x[0] in "=+-@\t\r" else x for x in tokens]
    assert spreadsheet_cell("-") == "'-" and spreadsheet_cell("x-") == "x-"


# -- 2. deploy/serve-class.sh ------------------------------------------------------------------------------
def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


def test_serve_class_refuses_before_starting_anything():
    proc = serve("--replicas", "0", "--port", str(free_port()))
    err = proc.communicate(timeout=30)[1]
    assert proc.returncode == 2 and "at least one replica" in err and "serving on" not in err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = serve("--replicas", "1", "--port", str(port))
        err = proc.communicate(timeout=30)[1]
    assert proc.returncode == 1 and f"port {port} on 127.0.0.1 is in use" in err and "replica 0" not in err


def test_serve_class_reports_a_replica_that_cannot_start(tmp_path):
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'No module named streamlit' >&2\nexit 1\n")
    broken.chmod(0o755)
    start = time.monotonic()
    proc = serve("--replicas", "2", "--port", str(free_port()), "--logs", str(tmp_path / "logs"),
                 env={"PYTHON": str(broken)})
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 1, err
    assert err.count("failed its health check: it exited with code 1") == 2
    assert "No module named streamlit" in err and "no replica is healthy" in err and "serving on" not in err
    assert time.monotonic() - start < 30                                  # not 60 s per replica
    assert "No module named streamlit" in (tmp_path / "logs" / "replica-1.log").read_text()


@pytest.mark.browser                  # starts an app server (a replica) itself (see tests/conftest.py)
def test_serve_class_restarts_a_killed_replica_and_stops_when_nginx_dies(tmp_path):
    port, logs, lines = free_port(), tmp_path / "logs", []
    proc = serve("--replicas", "1", "--port", str(port), "--logs", str(logs))
    try:
        first = int(read_until(proc, r"replica 0: pid (\d+)", lines).group(1))
        read_until(proc, r"serving on", lines)
        os.kill(first, signal.SIGKILL)                                  # the OOM killer, say
        read_until(proc, r"replica 0 \(pid \d+\) was killed by signal 9; restarting it in 1 s", lines)
        second = int(read_until(proc, r"replica 0: pid (\d+)", lines).group(1))
        read_until(proc, r"replica 0 answers its health check again", lines)
        import urllib.request
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10).status == 200
        master = int((logs / "nginx.pid").read_text())
        workers = [int(p) for p in subprocess.run(["pgrep", "-P", str(master)], capture_output=True,
                                                  text=True).stdout.split()]
        assert workers == []                # nginx runs as one process (master_process off): none to orphan
        os.kill(master, signal.SIGKILL)
        read_until(proc, r"nginx was killed by signal 9: the class server is down", lines)
        assert proc.wait(timeout=60) == 1
        assert not any(alive(pid) for pid in (first, second, *workers))  # nothing left, no worker on the port
        with socket.socket() as s:
            # SO_REUSEADDR: the health check's closed connection may sit in TIME_WAIT on this port; Linux
            # still refuses the bind while any socket listens on it
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", port))                                 # the port is free again
        assert "killed by signal 9" in (logs / "supervisor.log").read_text()
        assert (logs / "replica-0.log").stat().st_size > 0 and (logs / "access.log").exists()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


# -- 3, 4, 7: in the browser ------------------------------------------------------------------------------
# Every stop of the learning path, the real model's by each of its views. Each page is clicked once its run has
# ended (wait_for_app): a deferred download whose file a run had dropped failed only then, as a learner's would.
PAGES = [*(stop.address for stop in PATH if stop.url_path != "real_model"),
         *(f"real_model?real_model_view={v}" for v in REAL_MODEL_READY)]


@pytest.mark.browser
def test_every_download_button_delivers_on_a_fresh_server(browser):
    """A fresh server; every page and real-model view opened by its link, every download button on it clicked."""
    seen = {}
    with start_server() as (url, proc):
        # one tab going from page to page, as a visitor's (a new tab per page cost a second each)
        context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
        page = context.new_page()
        for path in PAGES:
            page.goto(f"{url}/{path}{'&' if '?' in path else '?'}lang=en")
            view = path.split("=")[-1] if "real_model" in path else None
            ready = REAL_MODEL_READY.get(view)
            if ready:
                page.wait_for_selector(ready, timeout=120_000)
            wait_for_app(page, chart=not ready and path not in ("classroom", "practice"))
            buttons = page.locator('[data-testid="stDownloadButton"] button:visible')
            for i in range(buttons.count()):
                with page.expect_download(timeout=60_000) as download:
                    buttons.nth(i).click()
                size = Path(download.value.path()).stat().st_size
                seen[f"{path} #{i} {download.value.suggested_filename}"] = size
        context.close()
        proc.terminate()
        log = proc.communicate(timeout=30)[0].decode()
    assert len(seen) >= 10, seen                                         # the figures' HTML, CSV and JSON exports
    assert all(size > 0 for size in seen.values()), seen
    assert "MediaFileStorageError" not in log and "Traceback" not in log, log[-3000:]


@pytest.mark.browser
def test_an_unpaired_surrogate_is_cleaned_in_the_tab(tabs, app_url, app_log):
    """On the shared server, its log read from this test's start (a server of its own cost 5 s to start)."""
    mark = len(app_log.lines)
    page = tabs.open({"width": 1440, "height": 900})
    page.goto(f"{app_url}/real_model?lang=en")
    wait_for_app(page)
    page.locator("textarea").first.click()
    page.evaluate("""() => { const ta = document.querySelector('textarea');
        Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(ta, ' tiger \\uD800 red');
        ta.dispatchEvent(new Event('input', {bubbles: true})); }""")       # what a broken paste leaves
    assert page.locator("textarea").first.input_value() == " tiger \ufffd red"
    page.get_by_role("button", name="Run").click()
    page.wait_for_function("[...document.querySelectorAll('.rm-chip')].some(c => c.textContent.includes('red'))")
    tabs.wipe(page)                                      # leaves the app (its session ends), then the log is read
    log = app_log.since(mark)
    assert "bad UTF-8" not in log and "Traceback" not in log, log[-3000:]


@pytest.mark.browser
def test_a_student_moved_to_another_replica_keeps_the_prompt(browser, tmp_path):
    """A class server of two replicas; a student runs a prompt of their own in the one-head view; their replica
    is killed (-9). The tab lands on the other replica with the prompt and the view, and is told once."""
    port, logs, lines = free_port(), tmp_path / "logs", []
    proc = serve("--replicas", "2", "--port", str(port), "--logs", str(logs))
    try:
        pids = [int(read_until(proc, r"replica \d: pid (\d+)", lines).group(1)) for _ in range(2)]
        ports = [int(re.search(r"127\.0\.0\.1:(\d+)", line).group(1)) for line in lines if "pid" in line]
        read_until(proc, r"serving on", lines, timeout=180)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"http://127.0.0.1:{port}/real_model?lang=en&real_model_view=head")
        wait_for_app(page, 120_000)
        mine = " the tiger is red . the cat is blue . ask tiger ?"
        page.locator("textarea").first.fill(mine)
        page.get_by_role("button", name="Run").click()
        ran = "[...document.querySelectorAll('g[class*=tick] text')].some(t => t.textContent.includes('blue'))"   # its axis
        page.wait_for_function(ran, timeout=60_000)
        sid = next(c["value"] for c in page.context.cookies() if c["name"] == "gdn_session")
        served = [line for line in (logs / "access.log").read_text().splitlines() if f"sid={sid}" in line]
        upstream = int(re.search(r"-> 127\.0\.0\.1:(\d+)", served[-1]).group(1))
        page.wait_for_function("(sessionStorage.getItem('gdn.kept') || '').includes('cat is blue')")   # the tab kept it
        with page.expect_console_message(lambda m: "WebSocket onclose" in m.text, timeout=60_000):
            os.kill(pids[ports.index(upstream)], signal.SIGKILL)            # the tab sees its connection drop
        page.get_by_role("button", name="Run").click()                       # their next Run reaches a new process
        moved = t("common.server_changed", "en")
        page.get_by_text(moved).wait_for(timeout=120_000)
        expect(page.locator("textarea").first).to_have_value(mine, timeout=60_000)   # drawn later in that run
        assert "real_model_view=head" in page.url
        page.wait_for_function(ran, timeout=120_000)                         # the prompt ran again, there
        page.get_by_role("button", name="Run").click()                       # the next run: said once only
        page.get_by_text(moved).wait_for(state="detached", timeout=60_000)
        page.close()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)

