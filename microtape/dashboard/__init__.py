"""The live training page, served by the standard library on 127.0.0.1.

Files, in reading order: ``charts.py`` (SVG drawn by microtape, user text
escaped), ``backward_panel.py`` (the Backward panel's table), ``log_args.py``
(what ``Dashboard.log`` accepts), ``next_frame.py`` (``next_frame``, which
lets the page be served between steps), ``series.py``, ``recording.py``,
``render.py``, ``server.py`` (Server-Sent Events), ``page.py``
(``Dashboard``) and ``demo.py`` (``python -m microtape dashboard --demo``).
"""
