"""Multi-query associative recall (MQAR): which memory rule lets a tiny model recall many key-value pairs;
and the update task: which one reads a key's new value after the key was written again.

    data.py        the MQAR sequences (pairs, then the keys asked again) and the update task's
    models.py      tiny models that differ only in their memory: softmax, linear, decay, deltanet, gdn
    train.py       one training run and its test-set accuracy
    stacked.py     many models of one width as one: a leading model axis on every weight, one launch for all
    batched.py     training a stack: every member exactly as train.py would train it alone
    sweep.py       the shipped grids, one stack per width (and depth) (assets/recall/, assets/recall_update/)
    quick.py       the small CPU setting of the page's "train one now" (python -m gdn.recall --quick --seed N)
    inspect.py     a trained model's gates, memory size and per-pair recall on one sequence
    write_step.py  the delta-rule write as one gradient step on 1/2 ||S^T k - v||^2
    gate_init.py   the decay gate's initial half-lives under two init recipes
    results.py     the shipped results as cells: best learning rate, every seed, settled or not
    findings.py    what the results say, as claims with their numbers (the page's and REPORT.md's sentences)
    report.py      REPORT.md written from its template and the results (python -m gdn.recall.report)
    capacity.py    the cells at capacity trained again with more seeds: merged in, and how many made the jump
    update.py      the update task's quick CPU setting (python -m gdn.recall --task update --quick --seed N)
    update_results.py  its sweep's cells: the three scores per seed, settled or not
    update_findings.py what that sweep says (the update page's and its REPORT.md's sentences)
    update_report.py   assets/recall_update/REPORT.md (python -m gdn.recall.update_report --write)
    update_inspect.py  inside a trained update model: the answer for a rewritten key, the gates at rewrites
"""
