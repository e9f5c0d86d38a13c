#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
# Base image: Ubuntu 22.04 or later (its python3 is 3.10 or newer; microtape needs
# Python >= 3.10, and Ubuntu 20.04's python3 is 3.8).
# The autograder zip holds, at its root (Gradescope unpacks it into /autograder/source):
#   setup.sh, run_autograder          these two files (docs/examples/gradescope/ in the repository)
#   microtape-<version>-py3-none-any.whl   python -m build --wheel, in the repository
#   assignment.toml                   optional: the exercises, their points, the hidden checks' folder
#   hidden_checks/                    optional: your hidden check files (see the teachers' page)
#
# AUTOGRADER_ROOT, VENV and APT exist for trying it out of Gradescope (the tests
# run it against a folder laid out as /autograder is); Gradescope sets none of them.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
VENV="${VENV:-/opt/microtape}"
APT="${APT:-apt-get}"
"$APT" update
"$APT" install -y python3 python3-venv
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "microtape needs Python 3.10 or later: choose the Ubuntu 22.04 (or later) base image")'
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --no-index --no-deps "$ROOT"/source/microtape-*.whl
"$VENV/bin/python" -m microtape exercises --list
