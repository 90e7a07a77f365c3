"""The bounds of app_pages' own caches, by name: what caches.py lists with each cache's key and owner.
Apart from caches.py, which reads the library's figure modules (and so Plotly): a worker process imports
these bounds (work.py) and no figure code with them.
"""

BOUNDS = {                    # max_entries of the streamlit caches in app_pages (by name below)
    "figures.shared_figure": 1024,
    "compute.model": 2,
    "work.models": 2,
    "work.inputs": 4,
    "compute._scan": 2,
    "compute._describe": 64,
    "live.rooms": 1000,
    "playground.lessons": 64,
    "player.memory": 256,
    "memory.editor": 256,
    "player.compare": 64,
    "explorer.start": 8,
    "explorer.playground": 16,
    "explorer.overwrite": 24,
    "explorer.geometry": 8,
    "update.paths": 32,
}
