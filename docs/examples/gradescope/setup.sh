#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image (Ubuntu).
# The autograder zip holds: setup.sh, run_autograder, a microtape wheel
# (python -m build --wheel, in the repository) and, if you have them, your
# hidden check files in hidden_checks/.
set -euo pipefail
apt-get update
apt-get install -y python3 python3-venv
python3 -m venv /opt/microtape
/opt/microtape/bin/pip install /autograder/source/microtape-*.whl
