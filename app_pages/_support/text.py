"""Text from outside the app (file names, repo ids, uploads) shown safely inside markdown."""
from __future__ import annotations

import re


def plain(text: str) -> str:
    """Text from outside (a file name, a repo id) shown as itself inside markdown: every markdown
    character escaped (and $ and : too: Streamlit reads $..$ as LaTeX and :name: as an icon), so a name like
    ![x](http://host/img) is not turned into an image the browser fetches."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:])", r"\\\1", str(text))
