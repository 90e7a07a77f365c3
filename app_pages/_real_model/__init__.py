"""The real-model page's parts (app_pages/real_model.py puts them together, in this order):

    keys.py      every session and widget key of the page, named once
    context.py   Loaded, Request, Trace and ViewContext: what the views are given (no module globals)
    source.py    the model picker and the load; download.py: the hub download panel it can open
    prompt.py    presets, typed or uploaded prompts, Run, and the trace (presets.py: the example prompts)
    views/       the views: gates (+ overview), intervene, head and check, replay and export
    drawn.py     a Run's figures (every layer's gates and overview, the guesses), built in the worker that runs it
    replay_link.py  a replay's address: what it was made of, in the memory page's link, and made again from it
    about.py     below the views: the stories, what the model is, its evidence, the tokens
    found.py     the interventions and gate contrasts a hint names, searched on the loaded model and prompt
    hints.py     those facts as sentences: each claim worded by whether its numbers bear it out
    fail.py      a bad input's message, then stop
"""
