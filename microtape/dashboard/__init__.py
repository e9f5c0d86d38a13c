"""The live training page, served by the standard library on 127.0.0.1.

The top of the package, beside ``classroom/``. In reading order:
``arguments.py`` (what ``Dashboard.log`` accepts), ``series.py``,
``charts.py`` (SVG drawn by microtape, user text escaped), ``recording.py``,
``render.py``, ``server.py`` (Server-Sent Events), ``page.py``
(``Dashboard``) and ``demo.py`` (``python -m microtape dashboard --demo``).
"""
