"""The 2-D view of one delta-rule write: what the write replaces, what it leaves alone, and the page section."""
import numpy as np
import pytest

from gdn.lessons.geometry import scene, unit, write
from tests.apptest import open_app, player_payload
from tests.htmlview import select


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


def metric_values(markup: str) -> dict[str, str]:
    return {n.attrs["data-metric"]: n.children[1].text for n in select(markup, class_="metric")}


def arrow_tip(markup: str, name: str, panel: int) -> np.ndarray:
    """The tip of an arrow read back from the SVG's drawing units into key / value units."""
    from gdn.figures.geometry_html import GAP, PANEL_W, SCALE, TOP, X_RANGE, Y_RANGE
    group, = select(markup, data_arrow=name)
    polygon, = (n for n in group.children if n.tag == "polygon")
    x, y = (float(v) for v in polygon.attrs["points"].split()[0].split(","))
    return np.array([(x - panel * (PANEL_W + GAP)) / SCALE + X_RANGE[0], Y_RANGE[1] - (y - TOP) / SCALE])


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_playground_shows_the_2d_write_at_every_grid_point(lang):
    """The explorer's frames (app_pages/_geometry_view.py): at each grid point the numbers and the arrows are
    the closed forms for S1 = k1 v1^T, v1 = e1, v2 = e2, c = cos(angle between the keys):
    read k2 = ((1 - beta) c, beta), read k1 = (1 - beta c^2, beta c), interference beta |c| sqrt(1 + c^2)."""
    at = open_app(lang, "app_pages/playground.py", playground_delta2d_k1="30", playground_delta2d_between="45",
                  playground_delta2d_beta="0.5")
    assert not at.exception, [e.value for e in at.exception]
    data, frames = player_payload(at, "playground_delta2d_explorer")
    k1s, betweens, betas = ([float(v) for v in c["values"]] for c in data["controls"])
    assert len(frames) == len(k1s) * len(betweens) * len(betas) and {0, 45, 90, 180} <= set(betweens)
    assert [g[i] for g, i in zip((k1s, betweens, betas), data["index"])] == [30, 45, 0.5]    # the link's values
    for key in ("0,4,10", "1,3,5", "11,12,3", "5,6,7", "2,0,0", "7,9,1"):
        k1, between, beta = (g[int(i)] for g, i in zip((k1s, betweens, betas), key.split(",")))
        c = np.cos(np.deg2rad(between))
        fmt = lambda r: "({:.2f}, {:.2f})".format(*(np.where(np.abs(r) < 0.005, 0.0, r) + 0.0))
        got = metric_values(frames[key])
        assert got["read2"] == fmt(np.array([(1 - beta) * c, beta])), key
        assert got["read1"] == fmt(np.array([1 - beta * c * c, beta * c])), key
        assert got["interference"] == f"{beta * abs(c) * np.sqrt(1 + c * c):.2f}", key
        assert got["angle"].startswith(f"{between:.0f}°") and f"{c:.2f}" in got["angle"], key
        for name, angle in (("k1", k1), ("k2", k1 + between)):             # the keys drawn at their angles
            np.testing.assert_allclose(arrow_tip(frames[key], name, 0), [np.cos(np.deg2rad(angle)),
                                                                         np.sin(np.deg2rad(angle))], atol=0.01)
        if beta > 0:
            np.testing.assert_allclose(arrow_tip(frames[key], "read2", 1), [(1 - beta) * c, beta], atol=0.01)
        assert "nan" not in frames[key].lower()
    for bad in ("7", "inf", "nan", "-5", "1e400", "abc"):                  # not an offered value: the default
        at = open_app(lang, "app_pages/playground.py", playground_delta2d_between=bad, playground_delta2d_beta=bad)
        assert not at.exception and at.session_state["playground_delta2d_between"] == 60
        assert at.session_state["playground_delta2d_beta"] == 1.0


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_axes_names_never_sit_on_a_vectors_label(lang):
    """Over every grid point of the view, each vector's label (text centred on its anchor, 16 px, ~0.6 em a
    Latin letter) and each axis name (right-aligned in its corner) keep apart: at the axes' ends, "dim 2"
    sat on "read k2" and "dim 1" on "k1"."""
    from gdn.figures.geometry_html import write_2d_html
    from gdn.i18n import t
    from app_pages._geometry_view import BETAS, BETWEEN, K1_ANGLES, NAMES
    words = {n: t(f"geometry.{n}", lang) for n in NAMES}
    width = lambda text: sum(16 if ord(ch) > 0x2e7f else 9.6 for ch in text)     # CJK a full em, else ~0.6 em
    def box(node, anchor: str):
        x, y = float(node.attrs["x"]), float(node.attrs["y"])
        w = width(node.text)
        left = x - w / 2 if anchor == "middle" else x - w
        return left, y - 14, left + w, y + 3
    apart = lambda a, b: a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
    for k1 in K1_ANGLES:
        for between in BETWEEN:
            for beta in BETAS[::2]:
                markup = write_2d_html(scene(k1, k1 + between, beta), labels=words, metrics=[])
                names = [box(n, "end") for n in select(markup, class_="tick")]
                labels = [box(n, "middle") for n in select(markup, class_="vec-label")]
                assert len(names) == 4 and labels
                assert all(apart(a, b) for a in names for b in labels), (k1, between, beta)
