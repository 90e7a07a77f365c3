"""The one bounded least-recently-used map of the project (the app's shared result caches, figure
skeletons, CUDA graphs, the capacity panel's random normals all use it).

    cache = LRU(8)
    hit = cache.get(key)            # None when absent; a hit becomes the most recently used
    cache.put(key, value)           # the least recently used entry goes once there are more than 8

Thread-safe (one lock per map): app sessions run in threads of one process. Entries put with pin=True
sit beside the LRU in a second map of at most max_pinned entries (oldest pin dropped first), so a
burst of one-off keys cannot evict them (the example prompts everyone opens first).
"""
from __future__ import annotations

import threading
from collections import OrderedDict


class LRU:
    def __init__(self, maxsize: int, max_pinned: int = 32):
        if maxsize < 1:
            raise ValueError(f"an LRU needs room for at least one entry, got maxsize={maxsize}")
        self.maxsize, self.max_pinned = maxsize, max_pinned
        self._items: OrderedDict = OrderedDict()           # least recently used first
        self._pinned: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        with self._lock:
            if key in self._pinned:
                return self._pinned[key]
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key, value, pin: bool = False) -> None:
        with self._lock:
            items = self._pinned if pin else self._items
            items[key] = value
            items.move_to_end(key)
            while len(items) > (self.max_pinned if pin else self.maxsize):
                items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._pinned.clear()

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._items or key in self._pinned

    def __len__(self) -> int:
        return len(self._items) + len(self._pinned)
