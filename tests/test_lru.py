"""gdn.lru: the one bounded LRU every hand-made cache of the app and the library is built on."""
from gdn.lru import LRU


def test_lru_is_bounded_and_keeps_the_recently_used():
    lru = LRU(2)
    for i in range(3):
        lru.put(i, i)
    assert 0 not in lru and lru.get(2) == 2 and len(lru) == 2
    lru.get(1)                                       # 1 is now more recent than 2
    lru.put(3, 3)
    assert 2 not in lru and lru.get(1) == 1 and lru.get(3) == 3


def test_lru_pins_sit_beside_the_bound():
    lru = LRU(1, max_pinned=2)
    lru.put("example", 0, pin=True)
    for i in range(5):                               # a burst of one-off keys
        lru.put(i, i)
    assert lru.get("example") == 0 and len(lru) == 2
    lru.put("a", 1, pin=True)
    lru.put("b", 2, pin=True)                        # a third pin drops the oldest
    assert "example" not in lru and lru.get("b") == 2
    lru.clear()
    assert len(lru) == 0
