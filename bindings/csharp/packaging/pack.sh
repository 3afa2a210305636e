#!/usr/bin/env bash
# Writes a .nupkg: the zip of a staging folder laid out as the package, plus
# the manifest (Fdk.nuspec with $version$ and $projectUrl$ replaced) and the
# Open Packaging Conventions parts NuGet clients before 3.x read
# ([Content_Types].xml, _rels/.rels). Done here rather than with Debian's
# nuget 2.8, whose `nuget pack` rejects <license> and <readme>.
#
#   pack.sh STAGING NUSPEC VERSION PROJECT_URL OUT.nupkg
set -euo pipefail
[ $# -eq 5 ] || { sed -n '2,8p' "${BASH_SOURCE[0]}" >&2; exit 2; }
staging="$1" nuspec="$2" version="$3" url="$4" out="$5"
die() { echo "pack.sh: $*" >&2; exit 1; }
[ -d "$staging" ] || die "no folder $staging"
case "$url" in ""|http://*|https://*) ;; *) die "the project URL must be http(s): $url" ;; esac

id="$(sed -n 's:.*<id>\(.*\)</id>.*:\1:p' "$nuspec")"
[ -n "$id" ] || die "no <id> in $nuspec"
# No project URL (the project has none public yet): no <projectUrl> line,
# rather than a placeholder.
if [ -n "$url" ]; then
  sed -e "s|\\\$version\\\$|$version|g" -e "s|\\\$projectUrl\\\$|$url|g" "$nuspec" > "$staging/$id.nuspec"
else
  sed -e "s|\\\$version\\\$|$version|g" -e "/\\\$projectUrl\\\$/d" "$nuspec" > "$staging/$id.nuspec"
fi
! grep -q '\$[a-zA-Z]*\$' "$staging/$id.nuspec" || die "a \$property\$ of $nuspec is left unreplaced"

# Every extension in the package needs a content type (OPC); NuGet ignores
# the values.
{
  echo '<?xml version="1.0" encoding="utf-8"?>'
  echo '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
  echo '  <Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml" />'
  echo '  <Default Extension="nuspec" ContentType="application/octet" />'
  (cd "$staging" && find . -type f -name '*.*' ! -name '*.nuspec' ! -name '*.rels' |
     sed 's/.*\.//' | sort -u) |
    while read -r ext; do echo "  <Default Extension=\"$ext\" ContentType=\"application/octet\" />"; done
  echo '</Types>'
} > "$staging/[Content_Types].xml"
mkdir -p "$staging/_rels"
cat > "$staging/_rels/.rels" <<RELS
<?xml version="1.0" encoding="utf-8"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
  <Relationship Type="http://schemas.microsoft.com/packaging/2010/07/manifest" Target="/$id.nuspec" Id="R0" />
</Relationships>
RELS
# A file without an extension would have no content type.
! (cd "$staging" && find . -type f ! -name '*.*' | grep -q .) || die "a file without an extension in $staging"

mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
rm -f "$out"
list="$(mktemp)"
trap 'rm -f "$list"' EXIT
(cd "$staging" && find . -type f | sed 's|^\./||' | LC_ALL=C sort > "$list" &&
   cmake -E tar cf "$out" --format=zip --files-from="$list")
echo "pack.sh: wrote $out"
