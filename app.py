"""Gated DeltaNet Explorer: page routing and the chrome every page shares (language, lecture mode)."""
import os

# Before torch is first imported: one OpenMP thread per computation, unless the operator sets
# OMP_NUM_THREADS. A class shares this server, and a busy machine is the normal case: there, torch's
# threads wait for each other at every op. Measured on the shared 2-core box (bench/README.md, "Threads"):
# a 64-token trace of the 0.8B shape took 2.6 s with 1 thread and 16 s with 2; the tiny model 0.18 s
# vs 1.65 s; 3 of 30 classroom sessions timed out with 2 threads on 1 allowed core. Only a quiet machine
# serving one user gains from more threads. Never torch.set_num_threads from a
# session thread: it hangs; the environment variable is read once, here, before torch starts.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import streamlit as st

from app_pages import _follow

# heap: once per process; explorer, player, swap: register their kinds of view.relay's messages at import
from app_pages._support import browser, chrome, explorer, heap, path, player, screen, swap, turn, view  # noqa: F401
from app_pages._support.notes import teacher_notes
from app_pages._support.share_panel import share_panel

# One run at a time runs Python on this server (app_pages/_support/turn.py): runs that share the interpreter
# lock all at once starve the event loop that sends every answer.
with turn.taken():
    chrome.init_session()
    st.set_page_config(page_title="Gated DeltaNet Explorer", page_icon="🧠", layout="wide",
                       initial_sidebar_state="collapsed" if chrome.lecture() else "auto")

    # The navigation is the learning path (app_pages/_support/path.py); its first stop is the default page.
    # Streamlit serves the default page at "/" only, yet reserves its url_path: so it gets a name nobody
    # types, and a hidden twin serves /start. /memory (older links) opens the memory page the same way.
    first = path.PATH[0]
    pages = [st.Page(stop.file, title=chrome.tr(f"nav.short_{stop.key}"), icon=stop.icon,
                     url_path=stop.url_path if i else f"{stop.url_path}-default", default=i == 0)
             for i, stop in enumerate(path.PATH)]
    pages.append(st.Page(first.file, title=chrome.tr(f"nav.{first.key}"), url_path=first.url_path,
                         visibility="hidden"))
    pages.append(st.Page("app_pages/memory_table.py", title=chrome.tr("nav.memory"), url_path="memory",
                         visibility="hidden"))
    page = st.navigation(pages, position="top")
    chrome.sidebar_chrome()
    with st.sidebar:        # scripts without a picture: in the sidebar they take no room from the page's first screen
        view.relay()        # the views' way to Python (app_pages/_support/view.py), outside every fragment
        screen.follow()     # lecture mode: the screen's scale, for the charts Python draws (screen.py)
        browser.clean_text_inputs()           # no unpaired surrogate ever leaves the tab
        browser.name_skip_link()              # Streamlit's skip link, in the page's language
    browser.say_if_moved()
    _follow.announce(page.url_path)            # a teacher's page switch reaches the room before the page runs
    page.run()
    browser.keep()                            # the tab keeps the prompt: a class-server replica may die
    path.next_link(page.url_path)
    stop = path.stop_of(page.url_path)
    prefix = stop.key if stop else page.url_path            # widget keys and notes use the stop's key ("memory_t")
    share_panel(page.url_path, prefix)
    teacher_notes(prefix)
    _follow.lead_or_follow(page.url_path)       # a live class's follow-me: the teacher reports, the students follow
