#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# install-deps.sh - install the Debian packages leaktop needs to build and test, if any
# is missing.  Idempotent and quick when everything is present; non-interactive.
set -eu

PKGS="make gcc clang llvm bpftool libbpf-dev libelf-dev libdw-dev libjansson-dev
      libcapstone-dev libncurses-dev pkg-config zlib1g-dev tmux jq util-linux procps
      mandoc
      protobuf-c-compiler libprotobuf-c-dev protobuf-compiler libclang-rt-14-dev
      libjemalloc-dev binutils xz-utils python3.11 python3.11-dbg libtcmalloc-minimal4
      libmimalloc2.0 libmimalloc-dev redis-server redis-tools musl-tools libmicrohttpd-dev prometheus curl
      iproute2 fuse3 libfuse3-dev libunwind-dev"

missing=""
for p in $PKGS; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "leaktop: missing Debian packages:$missing; run 'sudo make deps' or install them" >&2
	exit 1
fi
echo "  DEPS     installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
# redis-server's package starts its service; the tests and `make bench` start redis-server
# themselves (a temporary directory, a free port, nothing saved), so a service this script
# brought in is stopped and not started at boot.
case " $missing " in
*" redis-server "*)
	if [ -d /run/systemd/system ]; then
		systemctl disable --now redis-server >/dev/null 2>&1 || true
	else
		invoke-rc.d redis-server stop >/dev/null 2>&1 || true
		update-rc.d redis-server disable >/dev/null 2>&1 || true
	fi
	;;
esac
