"""Gated DeltaNet Explorer: page routing and the chrome every page shares (language, lecture mode)."""
import os

# Before torch is first imported: never more OpenMP threads than the CPUs this server may run on. Under a
# CPU limit (taskset, a cpuset) torch would otherwise start one thread per core of the machine,
# and the threads spin on each other (bench/load_ws.py: on 1 allowed core of 2, 3 of 30 sessions timed out).
os.environ.setdefault("OMP_NUM_THREADS", str(len(os.sched_getaffinity(0))))

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
