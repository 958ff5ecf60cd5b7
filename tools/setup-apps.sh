#!/usr/bin/env bash
# Installs the system packages the real-application drivers' tests run (Debian):
# Xvfb, a D-Bus session, the AT-SPI bus, Mousepad, PCManFM, LibreOffice Calc with its
# GTK3 plugin, and Chromium. Needs root (apt-get); elsewhere those tests skip.
#
#   bash tools/setup-apps.sh
set -euo pipefail
pkgs=(xvfb dbus-x11 at-spi2-core xdotool mousepad pcmanfm libreoffice-calc libreoffice-gtk3 chromium)
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "setup-apps: missing ${missing[*]} (install them with apt-get as root)" >&2
    exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
