#!/usr/bin/env bash
# Build a local stand-in for python:3.11-slim from Debian's own packages, for machines that
# reach Debian's mirror but no image registry: debootstrap a bookworm minbase root with
# python3 and python3-venv (Python 3.11), import it as an image, and tag it.
#
#   sudo .ci/container-base.sh                         # -> localhost/clearing-sim-base:bookworm
#   podman build --build-arg BASE=localhost/clearing-sim-base:bookworm -t clearing-sim .
#
# Needs root, debootstrap and podman (apt-get install debootstrap podman runc). Takes a few
# minutes, once; running it again rebuilds the base. Environment: BASE_TAG (the tag),
# DEBIAN_MIRROR (default http://deb.debian.org/debian), SUITE (default bookworm).
# It lives beside .ci/run because it prepares a build machine; it is not part of the image.
set -euo pipefail
TAG=${BASE_TAG:-localhost/clearing-sim-base:bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=${SUITE:-bookworm}
root=$(mktemp -d /var/tmp/clearing-sim-base.XXXXXX)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    "$SUITE" "$root" "$MIRROR"
# what a slim image leaves out: apt's lists and caches, docs, man pages, locales
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* \
       "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/log/*.log
find "$root"/usr/share/locale -mindepth 1 -maxdepth 1 ! -name 'C.*' -exec rm -rf {} +
tar -C "$root" --numeric-owner -c . \
  | podman import --change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8' - "$TAG"
podman image inspect --format '{{.Id}} {{.Size}} bytes' "$TAG"
