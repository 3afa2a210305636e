#!/usr/bin/env bash
# By hand, not in CI (Debian has no .NET runtime): runs tests/dotnet/Consumer.cs
# on a real .NET runtime against the package that `build.sh all` extracted,
# then on Mono, and compares the two. The consumer is compiled by mcs and
# retargeted to netstandard2.0 like the library (tools/Retarget.cs); the
# package's native files go next to it, as `dotnet publish -r linux-x64` puts
# them.
#
#   run.sh BUILD_OUT DOTNET     BUILD_OUT: build.sh all's OUT; DOTNET: a dotnet
#                               host with Microsoft.NETCore.App 3.1 or newer
# Checked once with the .NET Core 3.1.23 runtime of pip's dotnetcore2 wheel.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -eq 2 ] || { sed -n '2,12p' "${BASH_SOURCE[0]}" >&2; exit 2; }
out="$(cd "$1" && pwd)" dotnet="$2"
pkg="$out/package" work="$out/dotnet"
mono_lib=/usr/lib/mono
rm -rf "$work" && mkdir -p "$work/mono" "$work/app"
mcs -nologo -langversion:7.2 -r:"$pkg/lib/netstandard2.0/Fdk.dll" -r:"$mono_lib/4.5/Facades/netstandard.dll" \
  -r:"$out/tests/System.Memory.dll" -out:"$work/mono/Consumer.exe" "$here/Consumer.cs"
mcs -nologo -r:"$mono_lib/gac/Mono.Cecil/0.11.0.0__0738eb9f132ed756/Mono.Cecil.dll" -r:System.Core \
  -out:"$work/Retarget.exe" "$here/../../tools/Retarget.cs"
mono "$work/Retarget.exe" "$work/mono/Consumer.exe" "$work/app/Consumer.dll" \
  "$mono_lib/4.6.1-api" "$mono_lib/4.7.2-api/Facades/netstandard.dll"
cp "$pkg/lib/netstandard2.0/Fdk.dll" "$pkg"/runtimes/linux-x64/native/* "$work/app/"
echo '{ "runtimeOptions": { "framework": { "name": "Microsoft.NETCore.App", "version": "3.1.0" } } }' \
  > "$work/app/Consumer.runtimeconfig.json"
on_dotnet="$(cd "$work/app" && env -u LD_LIBRARY_PATH DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 "$dotnet" exec Consumer.dll)"
on_mono="$(MONO_PATH="$pkg/lib/netstandard2.0:$out/tests" LD_LIBRARY_PATH="$pkg/runtimes/linux-x64/native" \
           mono "$work/mono/Consumer.exe")"
echo ".NET: $on_dotnet"
echo "Mono: $on_mono"
[ "${on_dotnet##*, sum }" = "${on_mono##*, sum }" ] || { echo "run.sh: the volumes differ" >&2; exit 1; }
echo "run.sh: same volume on .NET and Mono"
