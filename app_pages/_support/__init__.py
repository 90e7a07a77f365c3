"""App plumbing shared by the pages (streamlit lives here and in the page scripts, never in gdn/).

    ui.py           the pages' one import: re-exports the helpers below under the names pages use
    chrome.py       language and lecture mode, and the sidebar that sets them
    screen.py       lecture mode's scale: how many times 1280x720 fits the screen (the tab reports it)
    url_state.py    widgets whose value lives in the link, and the registry share links are made from
    figures.py      chart display and the offline HTML download
    notes.py        explanations (callouts, folded in lecture mode) and the teacher's notes
    text.py         outside text shown safely in markdown
    share_panel.py  the sidebar's share button and dialog; share.py: the links and QR codes themselves
    path.py         the learning path, "Next" links, page switches that keep ?lang and ?mode
    escape.py       outside text (prompts, tokens, file names) made inert in Streamlit's Markdown
    browser.py      the tab side: lone surrogates cleaned from inputs, the prompt kept across a replica change
    view.py         the views' protocol (assets/common/view.js): the position handshake and the relay to Python
    player.py       the frame player: a token x stage figure stepped, played and scrubbed in the browser
    explorer.py     discrete sliders and linked hovers answered in the browser from a grid of frames
    swap.py         one of several HTML views Python drew, picked in the browser (the real model's layer)
    pack.py         what player, explorer and swap are sent (JSON, gzip, base64; no streamlit: workers pack too)
                    and the JS they run
    payload.py      a packed payload goes to a tab once, then by its hash alone
    compute.py      heavy jobs from the pages (run_job: place in line, estimate), the bounded result caches
                    shared by every session, and a checkpoint's config and tokenizer (the server reads no weights)
    jobs.py         the fair line of heavy jobs shared by every session: a cap, one job per session and per key,
                    a few per client, trainings never on the last free worker
    client.py       who a request comes from: the address seats, rooms and the job line are counted against
    workers.py      the worker processes (one per core the server may use) that run the jobs, forked from
                    a fork server; preloaded.py: imported last there, freezes what it imported
    work.py         what the workers run: model passes and the recall page's training, plain data in and out
    caches.py       every cache of the app and the library: bound, key, owner (one list); bounds.py: app_pages'
                    bounds alone (a worker reads them without the figure code caches.py imports)
    turn.py         one script run at a time runs Python (app.py holds the turn); waiting work gives it up
    heap.py         freezes the long-lived objects once, so Python's full garbage collections stay cheap
"""
