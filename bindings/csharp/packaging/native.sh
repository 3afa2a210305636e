#!/usr/bin/env bash
# The NuGet package's runtimes/linux-x64/native/ folder: libfdk.so with the
# shared libraries it needs that a stock Debian 12 / Ubuntu 22.04 does not
# have, so that it loads from the package alone.
#
#   native.sh stage LIBFDK DEST   copies LIBFDK as DEST/libfdk.so and its
#                                 non-base dependencies beside it, and gives the
#                                 copy of libfdk a RUNPATH of $ORIGIN (patchelf),
#                                 so the loader finds them there; the library
#                                 as built and installed is not changed
#   native.sh check DIR           fails unless every .so in DIR resolves its
#                                 dependencies (ldd, no LD_LIBRARY_PATH) from
#                                 DIR itself or the base system, and needs no
#                                 newer glibc or libstdc++ than documented;
#                                 and fails when a CUDA library (below) is in
#                                 DIR or a NEEDED entry of a library there
#
# CUDA: the GPU needs only the NVIDIA driver, which libfdk loads itself at
# run time (libcuda.so.1; dlopen, so a machine without it still loads
# libfdk and runs on the CPU). No CUDA library is linked or bundled: neither
# the driver's libcuda nor a toolkit library (libcudart, libcufft, libnvrtc,
# libnvJitLink). Both stage and check refuse one.
#
# "Base" = what every Debian 12 and Ubuntu 22.04 system has: glibc, and the
# libraries of the essential dpkg and of apt (libstdc++6, libgcc-s1,
# libzstd1, which dpkg pre-depends on since it reads zstd packages).
set -euo pipefail

BASE='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libzstd\.so\.1)$'
# Never a NEEDED entry, never bundled (see above).
CUDA_LIBS='^(libcuda|libcudart|libcufft|libnvrtc|libnvJitLink)([._-].*)?\.(so|dll)(\..*)?$'
# The floors docs/CSHARP.md states: the highest symbol versions the shipped
# libraries may need (glibc 2.35 = Ubuntu 22.04; GLIBCXX_3.4.30 = GCC 12's
# libstdc++, Debian 12 and Ubuntu 22.04).
GLIBC_FLOOR=2.35
GLIBCXX_FLOOR=3.4.30

die() { echo "native.sh: $*" >&2; exit 1; }

# The NEEDED entries of $1 (readelf -d), one per line.
needed() {
  readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

# Fails when $1 NEEDs a CUDA library.
no_cuda_needed() {
  local name
  for name in $(needed "$1"); do
    if [[ "$name" =~ $CUDA_LIBS ]]; then
      die "$1 has NEEDED $name: the CUDA backend must load only the NVIDIA driver, at run time, and no CUDA toolkit library"
    fi
  done
}

# "name path" per resolved dependency of $1 ("name not-found" when missing).
deps() {
  env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$1" |
    awk '/=>/ { print $1, ($3 == "not" ? "not-found" : $3); next }
         /^[ \t]*\// { n = $1; sub(".*/", "", n); print n, $1; next }
         { print $1, "-" }'
}

stage() {
  local libfdk="$1" dest="$2" name path
  command -v patchelf >/dev/null || die "patchelf not found (Debian package patchelf)"
  no_cuda_needed "$libfdk"
  mkdir -p "$dest"
  cp -L "$libfdk" "$dest/libfdk.so"
  chmod 0755 "$dest/libfdk.so"
  while read -r name path; do
    [[ "$name" =~ $BASE ]] && continue
    [[ "$name" =~ $CUDA_LIBS ]] && die "$libfdk needs $name (through a dependency): no CUDA library may be bundled"
    [ "$path" != not-found ] || die "$libfdk needs $name, which is not installed here"
    cp -L "$path" "$dest/$name"
    chmod 0644 "$dest/$name"
    echo "native.sh: bundled $name (from $path)"
  done < <(deps "$libfdk")
  patchelf --set-rpath '$ORIGIN' "$dest/libfdk.so"
}

# Highest version of symbol prefix $2 (GLIBC_, GLIBCXX_) that the files need.
highest() {
  local prefix="$1"; shift
  objdump -T "$@" | grep -o "(${prefix}[0-9.]*)" | tr -d '()' | sed "s/^${prefix}//" | sort -uV | tail -1
}

newer_than() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1)" != "$2" ]; }

check() {
  local dir
  dir="$(cd "$1" && pwd)"
  shopt -s nullglob
  local libs=("$dir"/*.so "$dir"/*.so.*) lib name path bad=0
  [ -f "$dir/libfdk.so" ] || die "no libfdk.so in $dir"
  [ "$(readelf -d "$dir/libfdk.so" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')" = '$ORIGIN' ] ||
    die "$dir/libfdk.so has no RUNPATH \$ORIGIN"
  for lib in "$dir"/*; do
    if [[ "$(basename "$lib")" =~ $CUDA_LIBS ]]; then
      echo "native.sh: $(basename "$lib") is a CUDA library: never bundled"; bad=1
    fi
  done
  for lib in "${libs[@]}"; do
    for name in $(needed "$lib"); do
      if [[ "$name" =~ $CUDA_LIBS ]]; then
        echo "native.sh: $(basename "$lib") has NEEDED $name: no CUDA library is linked (the driver is loaded at run time)"; bad=1
      fi
    done
    while read -r name path; do
      if [ "$path" = - ]; then
        continue  # the vDSO
      elif [ "$path" = not-found ]; then
        echo "native.sh: $(basename "$lib") needs $name: not found"; bad=1
      elif [ "$(dirname "$path")" = "$dir" ]; then
        echo "  $(basename "$lib"): $name => the package"
      elif [[ "$name" =~ $BASE ]]; then
        echo "  $(basename "$lib"): $name => base system ($path)"
      else
        echo "native.sh: $(basename "$lib") takes $name from $path, neither the package nor the base system"; bad=1
      fi
    done < <(deps "$lib")
  done
  local glibc glibcxx
  glibc="$(highest GLIBC_ "${libs[@]}")"
  glibcxx="$(highest GLIBCXX_ "${libs[@]}")"
  echo "native.sh: the shipped libraries need glibc >= $glibc, libstdc++ GLIBCXX_$glibcxx"
  if newer_than "$glibc" "$GLIBC_FLOOR"; then
    echo "native.sh: glibc $glibc is newer than the documented floor $GLIBC_FLOOR"; bad=1
  fi
  if newer_than "$glibcxx" "$GLIBCXX_FLOOR"; then
    echo "native.sh: GLIBCXX_$glibcxx is newer than the documented floor GLIBCXX_$GLIBCXX_FLOOR"; bad=1
  fi
  [ "$bad" -eq 0 ] || die "the package's native folder $dir is not self-contained"
}

case "${1:-}" in
  stage) [ $# -eq 3 ] || die "usage: native.sh stage LIBFDK DEST"; stage "$2" "$3" ;;
  check) [ $# -eq 2 ] || die "usage: native.sh check DIR"; check "$2" ;;
  *) sed -n '2,19p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
esac
