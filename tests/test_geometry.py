"""The 2-D view of one delta-rule write: what the write replaces, what it leaves alone, and the page section."""
import json

import numpy as np
import pytest

from gdn.lessons.geometry import scene, unit, write
from tests.apptest import open_app


@pytest.mark.parametrize("k1,k2,beta", [(0, 90, 1.0), (0, 60, 1.0), (30, 75, 0.4), (10, 190, 0.7), (45, 45, 0.5)], ids=str)
def test_a_write_replaces_the_part_along_k_and_leaves_the_rest(k1, k2, beta):
    s = scene(k1, k2, beta)
    # the old read along k2 moves a fraction beta of the way to v2
    np.testing.assert_allclose(s.read_k2[1], (1 - beta) * s.read_k2[0] + beta * s.v2, atol=1e-12)
    # a query orthogonal to k2 reads exactly what it read before
    across = unit(k2 + 90)
    np.testing.assert_allclose(s.S2.T @ across, s.S1.T @ across, atol=1e-12)
    np.testing.assert_allclose(s.across @ s.k2, 0.0, atol=1e-12)
    np.testing.assert_allclose(s.along + s.across, s.k1, atol=1e-12)
    # interference: beta |cos| |v2 - (k1.k2) v1|, from the closed form S1 = k1 v1^T
    c = np.cos(np.deg2rad(k2 - k1))
    assert s.interference == pytest.approx(beta * abs(c) * np.linalg.norm(s.v2 - c * s.v1), abs=1e-12)
    assert s.angle == pytest.approx(abs((k2 - k1 + 180) % 360 - 180), abs=1e-9)


def test_orthogonal_keys_do_not_interfere_and_a_full_write_stores_exactly():
    s = scene(20, 110, 1.0)
    assert s.interference == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(s.read_k1[1], s.v1, atol=1e-12)
    np.testing.assert_allclose(s.read_k2[1], s.v2, atol=1e-12)
    np.testing.assert_allclose(write(np.zeros((2, 2)), unit(0), np.array([3.0, 4.0]), 1.0), [[3, 4], [0, 0]])
    with pytest.raises(ValueError, match="beta"):
        scene(0, 0, 1.5)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_playground_shows_the_2d_write(lang):
    at = open_app(lang, "app_pages/playground.py", playground_delta2d_k1="0", playground_delta2d_k2="45",
                  playground_delta2d_beta="0.5")
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["playground_delta2d_k2"] == 45
    spec = json.loads(at.get("plotly_chart")[-1].proto.spec)
    texts = [a.get("text", "") for a in spec["layout"]["annotations"]]
    assert any("45°" in t and "0.71" in t for t in texts)                 # the angle and its cosine
    c = np.sqrt(0.5)                                                     # cos 45°; |v2 - c v1| = sqrt(1 + c²)
    assert any(t.endswith(f"{0.5 * c * np.sqrt(1 + c * c):.2f}") for t in texts)   # interference 0.43
    for bad in ("7", "inf", "nan", "-5", "1e400", "abc"):                  # not an offered value: the default
        at = open_app(lang, "app_pages/playground.py", playground_delta2d_k2=bad, playground_delta2d_beta=bad)
        assert not at.exception and at.session_state["playground_delta2d_k2"] == 60
        assert at.session_state["playground_delta2d_beta"] == 1.0
