"""The update's formulas as LaTeX with this token's numbers plugged in (shown beside the figure)."""
from __future__ import annotations

import numpy as np

from gdn.figures.common import cell_text
from gdn.steps import StepRecords


def vec(x: np.ndarray) -> str:
    """(3, -0.5) as LaTeX."""
    return r"(" + r",\ ".join(cell_text(np.atleast_1d(x))) + r")"


def stage_formulas(rec: StepRecords, t: int) -> dict[str, str]:
    """LaTeX per stage (keys of gdn.steps.STAGES) for token t."""
    s = rec.stream
    alpha = cell_text(np.array(s.alpha[t]))
    beta = vec(s.beta[t]) if np.ndim(s.beta[t]) else cell_text(np.array(s.beta[t]))
    return {
        "decay": rf"\tilde S = \alpha_t\, S_{{t-1}} = {alpha}\, S_{{t-1}}",
        "read": rf"\hat v = \tilde S^{{\top}} k_t = {vec(rec.prediction[t])}",
        "error": rf"e = v_t - \hat v = {vec(s.v[t])} - {vec(rec.prediction[t])} = {vec(rec.error[t])}",
        "write": rf"S_t = \tilde S + k_t\, (\beta_t \odot e)^{{\top}}, \quad \beta_t = {beta}",
        "query": rf"o_t = S_t^{{\top}} q_t = {vec(rec.output[t])}",
    }


CLOSED_FORM = r"S_t = \alpha_t \left(I - \beta_t k_t k_t^{\top}\right) S_{t-1} + \beta_t k_t v_t^{\top}"
