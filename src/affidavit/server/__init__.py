"""The daemon (``affidavit serve``): the typed HTTP API over one or more vaults (SPEC §4, W10).

    peer.py      SO_PEERCRED of each Unix-socket connection, from the kernel (httptools or h11)
    registry.py  the served vaults: names, owners, a pool of open connections, the loop's own
    auth.py      the Guard: authentication, authorisation, body limits, before any route
    fastlane.py  search answered on the event loop, inside the Guard (the route when unsure)
    routes/      one router per resource (meta, content, plans, jobs, lint, tokens)
    errors.py    the one error body, mapped from the AffidavitError tree
    logs.py      JSON lines on stderr, one per request
    workers.py   one job worker thread per vault
    app.py       create_app: the composition root
    runtime.py   sockets, uvicorn, signals; check.py: ``serve --check``

Needs the ``[server]`` extra (fastapi, uvicorn, uvloop, httptools); the client (:mod:`affidavit.client`) does not.
"""
