#!/usr/bin/env bash
# Fill wheelhouse/ (git-ignored) with the wheels of the core install and of its build
# back-end, for an image build whose containers cannot reach PyPI (the Dockerfile installs
# from wheelhouse/ with --no-index when it is there). The host's pip fetches them through
# the host's own network set-up. The wheels must fit the base image: same Python minor
# version (3.11) and a glibc no newer than its (bookworm: 2.36).
#
#   .ci/container-wheels.sh                # PYTHON=/path/to/python3 to choose the pip
#   rm -rf wheelhouse                      # to build from PyPI again
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
rm -rf wheelhouse
"$PYTHON" -m pip wheel --quiet --wheel-dir wheelhouse . "setuptools>=77" wheel
rm -f wheelhouse/clearing_sim-*.whl   # the image builds the package from its own source
ls wheelhouse | wc -l
