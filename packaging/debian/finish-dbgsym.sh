#!/usr/bin/env bash
# Repairs the -dbgsym packages CPack 3.25 makes (CPACK_DEBIAN_DEBUGINFO_PACKAGE):
# their md5sums name the build machine's absolute paths, and they carry no
# copyright, which lintian counts as errors. Each .ddeb is unpacked, given
# what debhelper gives a dbgsym package (/usr/share/doc/<package> as a link
# to the documentation of the package it depends on, exactly) and correct
# md5sums, and rebuilt.
#   usage: finish-dbgsym.sh DDEB...
set -euo pipefail
for ddeb in "$@"; do
  work="$(mktemp -d)"
  dpkg-deb -R "$ddeb" "$work/root"
  package="$(sed -n 's/^Package: //p' "$work/root/DEBIAN/control")"
  mkdir -p "$work/root/usr/share/doc"
  ln -s "${package%-dbgsym}" "$work/root/usr/share/doc/$package"
  (cd "$work/root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$work/root/DEBIAN/md5sums"
  chmod 0644 "$work/root/DEBIAN/md5sums"
  dpkg-deb --root-owner-group -Zxz --build "$work/root" "$ddeb" >/dev/null
  rm -rf "$work"
done
