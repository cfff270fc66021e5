#!/usr/bin/env bash
# apt-versions: which version of a Debian package to fetch, from the versions the archive serves
# today (`apt-cache madison`). Debian's security archive drops old versions every few weeks, so a
# version worked out from another package (the kernel's, say) may be gone; this takes the one
# that is safe instead and says so.
#
#   scripts/apt-versions.sh pick PACKAGE WANTED POLICY
#       Prints the version of PACKAGE to fetch. POLICY says what may stand in for WANTED:
#         exact    WANTED only (a package that must match another one to the version:
#                  linux-headers-ABI-common for linux-headers-ABI-amd64).
#         package  WANTED, else the newest version of PACKAGE served (its name fixes what must
#                  match: linux-headers-6.1.0-56-amd64 is the 6.1.0-56 ABI at any version).
#         series   WANTED, else the nearest of the same upstream series (6.1.x for 6.1.192-2):
#                  the newest of the same upstream version (6.1.192-3), else the nearest
#                  older one, else the nearest newer one (linux-kbuild-6.1, linux-source-6.1).
#       When the version differs from WANTED, a line on standard error says which was taken and
#       why. Exit 1, with what to do, when nothing served fits; 2 on bad usage.
#   scripts/apt-versions.sh served PACKAGE
#       The versions of PACKAGE the archive serves (binary packages), newest first.
#
# It reads only `apt-cache madison`, so a stand-in `apt-cache` on PATH replaces the archive
# (Tests/MediaDevicesTests/AptVersionsScriptTests.swift does).
set -euo pipefail
me=apt-versions

usage() { echo "usage: scripts/apt-versions.sh pick PACKAGE WANTED exact|package|series | served PACKAGE" >&2; exit 2; }

# served PACKAGE: the binary package's versions in apt's lists, newest first (source entries,
# which deb-src lines add, are left out).
served() {
	apt-cache madison "$1" 2>/dev/null |
		awk -F'|' -v p="$1" '{ gsub(/ /, "", $1); gsub(/ /, "", $2) } $1 == p && $3 ~ /Packages *$/ { print $2 }' |
		sort -u -V -r
}

# upstream VERSION: the version without its Debian revision (6.1.192 for 6.1.192-2).
upstream() { echo "${1%-*}"; }
# series VERSION: the upstream major.minor (6.1 for 6.1.192-2).
series() { upstream "$1" | cut -d. -f1-2; }

# in_series VERSIONS WANTED: those of VERSIONS (lines) in WANTED's upstream series.
in_series() {
	local v
	while read -r v; do if [[ $(series "$v") == "$(series "$2")" ]]; then echo "$v"; fi; done <<<"$1"
}

# older A B: whether A sorts before B (Debian's own comparison).
older() { dpkg --compare-versions "$1" lt "$2"; }

pick() {
	local package=$1 wanted=$2 policy=$3 versions v chosen='' why=''
	versions=$(served "$package")
	if [[ -z $versions ]]; then
		echo "$me: the archive serves no $package at all: run 'apt-get update' (apt's lists may be missing or old); if it still serves none, Debian has dropped the package and the script that asks for it needs a new name" >&2
		return 1
	fi
	if grep -qxF -- "$wanted" <<<"$versions"; then
		echo "$wanted"
		return 0
	fi
	case $policy in
	exact)
		;;
	package)
		chosen=$(head -n 1 <<<"$versions")
		why="the newest $package served (the name fixes what must match)"
		;;
	series)
		local same older_one newer_one
		same=$(while read -r v; do if [[ $(upstream "$v") == "$(upstream "$wanted")" ]]; then echo "$v"; fi; done <<<"$versions" | sed -n 1p)
		# Newest first: the first older version is the nearest older one; the last newer one the
		# nearest newer one.
		older_one=$(in_series "$versions" "$wanted" | while read -r v; do if older "$v" "$wanted"; then echo "$v"; fi; done | sed -n 1p)
		newer_one=$(in_series "$versions" "$wanted" | while read -r v; do if older "$wanted" "$v"; then echo "$v"; fi; done | tail -n 1)
		if [[ -n $same ]]; then
			chosen=$same why="the newest of the same upstream version $(upstream "$wanted")"
		elif [[ -n $older_one ]]; then
			chosen=$older_one why="the nearest older $(series "$wanted").x"
		elif [[ -n $newer_one ]]; then
			chosen=$newer_one why="the nearest newer $(series "$wanted").x"
		fi
		;;
	*) usage ;;
	esac
	if [[ -z $chosen ]]; then
		local allowed="$wanted exactly"
		[[ $policy == series ]] && allowed="a $(series "$wanted").x version"
		echo "$me: $package $wanted is no longer served, and nothing that may stand in for it is ($allowed; served: $(paste -sd' ' <<<"$versions"))." >&2
		echo "$me: remedy: run 'apt-get update' and try again; if the archive has moved on, use a kernel whose packages it serves: 'rm -rf .rig/kernel .rig/kernel-version' takes linux-image-amd64's current one, or set RIG_KERNEL_VERSION" >&2
		return 1
	fi
	echo "$me: $package $wanted is no longer served; taking $chosen, $why" >&2
	echo "$chosen"
}

case ${1:-} in
pick) (( $# == 4 )) || usage; pick "$2" "$3" "$4" ;;
served) (( $# == 2 )) || usage; served "$2" ;;
*) usage ;;
esac
