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

from app_pages._support import ui  # noqa: E402

ui.init_session()
st.set_page_config(page_title="Gated DeltaNet Explorer", page_icon="🧠", layout="wide",
                   initial_sidebar_state="collapsed" if ui.lecture() else "auto")

pages = [
    st.Page("app_pages/memory_table.py", title=ui.tr("nav.memory"), icon=":material/grid_on:", url_path="memory_table",
            default=True),
    st.Page("app_pages/playground.py", title=ui.tr("nav.playground"), icon=":material/tune:", url_path="playground"),
    st.Page("app_pages/compare.py", title=ui.tr("nav.compare"), icon=":material/compare:", url_path="compare"),
    st.Page("app_pages/chunking.py", title=ui.tr("nav.chunking"), icon=":material/view_module:", url_path="chunking"),
    st.Page("app_pages/real_model.py", title=ui.tr("nav.real_model"), icon=":material/biotech:", url_path="real_model"),
    st.Page("app_pages/cost.py", title=ui.tr("nav.cost"), icon=":material/memory:", url_path="cost"),
    st.Page("app_pages/classroom.py", title=ui.tr("nav.classroom"), icon=":material/school:", url_path="classroom"),
]
# The default page is served at "/" only; this hidden twin makes /memory (links, typed addresses) open
# the same page instead of Streamlit's "page not found".
pages.append(st.Page("app_pages/memory_table.py", title=ui.tr("nav.memory"), url_path="memory", visibility="hidden"))
page = st.navigation(pages, position="top")
ui.sidebar_chrome()
page.run()
prefix = page.url_path or "memory"                       # the default page's link path is empty
ui.share_panel(page.url_path, prefix)
ui.teacher_notes(prefix)
