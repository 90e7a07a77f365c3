"""The one import a page script needs: `from app_pages._support import ui`, then ui.tr(...), ui.linked(...).

ui.py holds no code of its own; each job lives in its own small module, re-exported here under the names
the pages have always used:

    chrome.py       language and lecture mode (lang, tr, label_maker, lecture, font_size), the sidebar
    url_state.py    widgets whose value lives in the link (linked, linked_int, bound, seed_from_url,
                    sync_to_url) and the registry share links are made from
    figures.py      chart display and the offline downloads (show_figure, html_download), shared_figure,
                    at_screen_scale (a chart drawn elsewhere, at lecture mode's scale: screen.py)
    notes.py        explanations (note; story: a hint whose result waits behind a reveal; stepping_title: a
                    stepping page's title and why it opens past step 1) and the teacher's notes
    text.py         outside text shown safely in markdown (plain)

app.py draws the chrome itself: chrome.sidebar_chrome, share_panel.share_panel, notes.teacher_notes.
"""
from app_pages._support.chrome import (  # noqa: F401
                                          ASSETS,
                                          BIG_METRICS_CSS,
                                          LANG_NAMES,
                                          font_size,
                                          label_maker,
                                          lang,
                                          lecture,
                                          put_param,
                                          tr,
)
from app_pages._support.figures import at_screen_scale, figure_download, html_download, shared_figure, show_figure  # noqa: F401
from app_pages._support.notes import note, stepping_title, story  # noqa: F401
from app_pages._support.text import plain  # noqa: F401
from app_pages._support.url_state import (  # noqa: F401
                                          bound,
                                          linked,
                                          linked_int,
                                          relabel_after_language_switch,
                                          seed_from_url,
                                          seed_int,
                                          sync_to_url,
)
