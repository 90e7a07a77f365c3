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

import streamlit as st  # noqa: E402

from app_pages._support import path, ui  # noqa: E402

ui.init_session()
st.set_page_config(page_title="Gated DeltaNet Explorer", page_icon="🧠", layout="wide",
                   initial_sidebar_state="collapsed" if ui.lecture() else "auto")

# The navigation is the learning path (app_pages/_support/path.py); its first stop is the default page.
pages = [st.Page(stop.file, title=ui.tr(f"nav.{stop.key}"), icon=stop.icon, url_path=stop.url_path, default=i == 0)
         for i, stop in enumerate(path.PATH)]
# The default page is served at "/" only; this hidden twin makes /memory (links, typed addresses) open
# the memory page instead of Streamlit's "page not found".
pages.append(st.Page("app_pages/memory_table.py", title=ui.tr("nav.memory"), url_path="memory", visibility="hidden"))
page = st.navigation(pages, position="top")
ui.sidebar_chrome()
page.run()
path.next_link(page.url_path or path.PATH[0].url_path)
prefix = page.url_path or "memory"                       # the default page's link path is empty
ui.share_panel(page.url_path, prefix)
ui.teacher_notes(prefix)
