#!/usr/bin/env bash
# Installs the system packages the real-application drivers' tests run (Debian):
# Xvfb, a D-Bus session, the AT-SPI bus, xdotool, the shipped applications (Mousepad,
# PCManFM, LibreOffice Calc, Writer, Impress and Math with the GTK3 plugin), the three the any-application tests
# explore (galculator: GTK 3, GPicView: GTK 2, FeatherPad: Qt 5), Chromium, and xclip
# (the real X clipboard of the Tables 6 and 7 study on Mousepad).
# Each toolkit's accessibility bridge: GTK 3 and Qt 5 carry theirs; GTK 2 loads it as a
# module that is a package of its own (libatk-adaptor: gtk-2.0/modules/libatk-bridge.so),
# without which a GTK 2 application (PCManFM) never appears on the accessibility bus.
# Needs root (apt-get); elsewhere those tests skip.
#
#   bash tools/setup-apps.sh
set -euo pipefail
pkgs=(xvfb dbus-x11 at-spi2-core xdotool libatk-adaptor
      mousepad pcmanfm libreoffice-calc libreoffice-writer libreoffice-impress libreoffice-math libreoffice-gtk3
      galculator gpicview featherpad
      chromium xclip)
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
