"""The container image (issue 27, section 1): the root ``Dockerfile`` built with podman, run
with a published port and a journal on a volume, healthy by its own ``HEALTHCHECK``, and the
README's HTTP-shim walkthrough (its bash block, ``BASE`` pointed at the container) printing
every line the README promises, down to the digest. Then the container is stopped and a
second one, on the same volume, replays the journal to the same digest.

Slow, and skipped (with the reason) where podman is missing or cannot run a container. The
base image: ``$CLEARING_SIM_BASE_IMAGE``, else ``localhost/clearing-sim-base:bookworm`` if
``.ci/container-base.sh`` has built it, else the Dockerfile's default (a registry's
``python:3.11-slim``). Machines with hybrid cgroups need ``CONTAINERS_CONF=.ci/containers.conf``
(README, "A container image").
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
IMAGE = "localhost/clearing-sim:test"
LOCAL_BASE = "localhost/clearing-sim-base:bookworm"
TOKEN = "devtoken1"  # the README walkthrough's
PODMAN = shutil.which("podman")

pytestmark = pytest.mark.slow


def _podman(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    assert PODMAN is not None
    return subprocess.run([PODMAN, *args], capture_output=True, text=True, timeout=timeout,
                          check=False)


def _base() -> str:
    chosen = os.environ.get("CLEARING_SIM_BASE_IMAGE")
    if chosen:
        return chosen
    if _podman("image", "exists", LOCAL_BASE).returncode == 0:
        return LOCAL_BASE
    return "python:3.11-slim"


@pytest.fixture(scope="module")
def image() -> str:
    """The image, built from this tree (podman's layer cache reuses what is up to date)."""
    if PODMAN is None:
        pytest.skip("podman is not installed (apt-get install podman runc)")
    if shutil.which("curl") is None or shutil.which("jq") is None:
        pytest.skip("the README walkthrough needs curl and jq on the host")
    base = _base()
    probe = _podman("run", "--rm", "--network", "none", base, "python3", "-c", "print(42)",
                    timeout=300)
    if probe.returncode != 0 or probe.stdout.strip() != "42":
        pytest.skip(f"podman cannot run a container from {base}: "
                    f"{(probe.stderr or probe.stdout).strip()} (hybrid cgroups? "
                    "CONTAINERS_CONF=.ci/containers.conf)")
    built = _podman("build", "--format", "docker", "--build-arg", f"BASE={base}", "-t", IMAGE,
                    str(ROOT), timeout=900)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return IMAGE


class _Container:
    """One ``podman run -d`` of the image: its name, its base URL on the host, its logs."""

    def __init__(self, image: str, volume: Path, name: str) -> None:
        self.name = name
        started = _podman(
            "run", "-d", "--name", name, "-p", "127.0.0.1::8080",
            "-e", "CLEARING_SIM_SEED=7", "-e", f"CLEARING_SIM_OPERATOR_TOKEN={TOKEN}",
            "-e", "CLEARING_SIM_JOURNAL=/data/journal.jsonl", "-v", f"{volume}:/data", image)
        assert started.returncode == 0, started.stderr
        port = _podman("port", name, "8080/tcp").stdout.split()[0]  # 127.0.0.1:43219
        self.base = f"http://{port}"

    def logs(self) -> str:
        got = _podman("logs", self.name)
        return got.stdout + got.stderr

    def wait_healthy(self, seconds: float = 30) -> None:
        """Until the image's own HEALTHCHECK passes (``podman healthcheck run`` runs it
        now: podman's timer for it needs systemd, which a CI runner may lack)."""
        deadline = time.monotonic() + seconds
        while True:
            check = _podman("healthcheck", "run", self.name)
            if check.returncode == 0:
                return
            assert time.monotonic() < deadline, \
                (f"never healthy (the HEALTHCHECK asks GET /sim/v1/health for a 200 saying ready): "
                 f"{check.stdout}{check.stderr}\n{self.logs()}")
            time.sleep(0.3)

    def stop(self) -> str:
        """SIGTERM, as ``docker stop`` sends it; the server's standard output, which ends
        with its virtual time and digest."""
        _podman("stop", "--time", "20", self.name)
        return _podman("logs", self.name).stdout

    def remove(self) -> None:
        _podman("rm", "--force", self.name)


@pytest.fixture
def containers(image: str) -> Iterator[list[_Container]]:
    started: list[_Container] = []
    yield started
    for container in started:
        container.remove()


def _walkthrough(base: str) -> tuple[str, list[str]]:
    """The README's HTTP-shim bash block aimed at ``base`` (without its own ``serve &`` and
    ``kill``), and the output lines it promises in full (its comments, less any with '…')."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## The HTTP shim"):]
    found = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert found is not None
    lines = found.group(1).splitlines()
    script = [line for line in lines
              if not line.startswith(("clearing-sim serve", "kill %1"))]
    assert len(script) == len(lines) - 2, "the walkthrough's serve and kill lines moved"
    assert script[0].startswith("BASE=http://127.0.0.1:8080 ")
    script[0] = script[0].replace("http://127.0.0.1:8080", base, 1)
    promised = [line[2:] for line in lines if line.startswith("# {") and "…" not in line]
    return "\n".join(script) + "\n", promised


def _in_order(promised: list[str], printed: list[str]) -> list[str]:
    """The promised lines not printed in that order (empty when all were)."""
    rest = iter(printed)
    return [line for line in promised if line not in rest]


def test_the_image_serves_the_readme_walkthrough_with_its_journal_on_a_volume(
        containers: list[_Container], image: str, tmp_path: Path) -> None:
    volume = tmp_path / "data"
    volume.mkdir()
    volume.chmod(0o777)  # the image's user (uid 10001) writes the journal here
    first = _Container(image, volume, f"clearing-sim-test-{os.getpid()}-1")
    containers.append(first)
    first.wait_healthy()
    script, promised = _walkthrough(first.base)
    ran = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120,
                         check=False)
    assert ran.returncode == 0, ran.stderr
    printed = ran.stdout.splitlines()
    assert len(promised) >= 12 and _in_order(promised, printed) == [], ran.stdout
    digest = json.loads(promised[-1])["digest"]
    output = first.stop()
    assert f"digest {digest}" in output.splitlines()[-1], output
    assert "clearing-sim serving on http://0.0.0.0:8080" in output
    assert (volume / "journal.jsonl").stat().st_size > 0

    second = _Container(image, volume, f"clearing-sim-test-{os.getpid()}-2")
    containers.append(second)
    second.wait_healthy()
    replayed = httpx.get(f"{second.base}/sim/v1/digest",
                         headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert replayed.json()["data"]["digest"] == digest
    second.stop()


def test_the_image_runs_as_a_user_not_root(image: str) -> None:
    who = _podman("run", "--rm", "--entrypoint", "id", image, "-u")
    assert who.returncode == 0 and who.stdout.strip() == "10001", who.stderr
