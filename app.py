"""Gated DeltaNet Explorer: page routing and the chrome every page shares (language, lecture mode)."""
import os

# Before torch is first imported: never more OpenMP threads than the CPUs this server may run on. Under a
# CPU limit (taskset, a cpuset) torch would otherwise start one thread per core of the machine,
# and the threads spin on each other (bench/load_ws.py: on 1 allowed core of 2, 3 of 30 sessions timed out).
os.environ.setdefault("OMP_NUM_THREADS", str(len(os.sched_getaffinity(0))))

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
