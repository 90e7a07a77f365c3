"""The write rules' one name and one colour each, wherever they are named or drawn (the compare page's players,
the playground, the recall and update sweeps and figures, the real model's ablation): a learner who has read
"red is linear attention" on one page must not find red meaning Gated DeltaNet on the next, and a reader of the
code must not meet one rule as "gated" in one file and "gdn" in the next (tests/test_rule_colours.py checks both).

    softmax    causal softmax attention (keeps every token: the reference)
    linear     linear attention: S_t = S_{t-1} + k_t v_t^T
    decay      a forgetting gate only (Mamba2 / GLA-like)
    deltanet   the delta rule
    gdn        Gated DeltaNet: the delta rule with a forgetting gate
"""
RULE_COLORS = {"softmax": "#6b7280", "linear": "#dc2626", "decay": "#d97706", "deltanet": "#2563eb", "gdn": "#059669"}
