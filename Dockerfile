# The HTTP shim as a container: `clearing-sim serve` on 0.0.0.0:8080, configured by its
# options (arguments after the image name) and by CLEARING_SIM_* environment variables
# (`clearing-sim serve --help` names them). README "A container image" has the run lines.
#
#   docker build -t clearing-sim .
#   podman build --format docker --build-arg BASE=localhost/clearing-sim-base:bookworm \
#       -t clearing-sim .          # no registry reachable: a base from .ci/container-base.sh
#
# BASE must give python3 (>= 3.11) with venv; the build stage installs the core package (no
# extras) into /opt/clearing-sim, the run stage copies that venv alone. A wheelhouse/ folder
# in the build context, if there is one, is installed from with --no-index (builds without
# network: `pip wheel -w wheelhouse . setuptools wheel` on the host).
ARG BASE=python:3.11-slim

FROM ${BASE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
RUN python3 -m venv /opt/clearing-sim
COPY . /src
RUN if [ -d /src/wheelhouse ]; then set -- --no-index --find-links /src/wheelhouse; fi; \
    /opt/clearing-sim/bin/pip install "$@" /src \
 && /opt/clearing-sim/bin/pip uninstall --yes pip setuptools \
 && /opt/clearing-sim/bin/clearing-sim serve --help > /dev/null

FROM ${BASE}
RUN useradd --system --no-log-init --uid 10001 --user-group --home-dir /data sim \
 && mkdir -p /data && chown sim:sim /data
COPY --from=build /opt/clearing-sim /opt/clearing-sim
ENV PATH=/opt/clearing-sim/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    CLEARING_SIM_HOST=0.0.0.0 \
    CLEARING_SIM_PORT=8080
# A journal here (CLEARING_SIM_JOURNAL=/data/journal.jsonl) outlives the container.
VOLUME /data
WORKDIR /data
USER sim
EXPOSE 8080
# Healthy: GET /sim/v1/health (no credential) answers 200 with "ready": true (the world
# built, the journal replayed). Python's urllib: slim images have no curl.
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python3", "-c", "import json, os, sys, urllib.request as u; r = u.urlopen('http://127.0.0.1:' + os.environ.get('CLEARING_SIM_PORT', '8080') + '/sim/v1/health', timeout=2); sys.exit(not (r.status == 200 and json.load(r)['data']['ready'] is True))"]
ENTRYPOINT ["clearing-sim", "serve"]
