"""App plumbing shared by the pages (streamlit lives here and in the page scripts, never in gdn/).

    ui.py       language, lecture mode, URL state (one helper for every linked widget), figures, share panel
    player.py   the frame player: a token x stage figure stepped, played and scrubbed in the browser
    compute.py  the shared slot pool, bounded result caches and the cached model loader
    pool.py     SlotPool and SharedLRU themselves (plain threading, unit-tested without streamlit)
    share.py    links that reopen a view, and their QR codes
    heap.py     freezes the long-lived objects once, so the collection after every run is cheap
"""
