#!/usr/bin/env bash
# Chromium and its driver for the browser test of tests/test_app.py: nothing to do when both are on PATH; else
# installed with apt-get (Debian's chromium and chromium-driver), which needs root. Exits 1, saying why, otherwise.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
	exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
	echo "install_chromium.sh: no chromium/chromedriver on PATH, and installing them needs root and apt-get" >&2
	exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
