#!/usr/bin/env bash
# setup.sh - install what tilec needs on Debian 12, then configure and build.
#
# usage: tools/setup.sh            (as root, or with sudo available)
#
# Installs the missing ones of the Debian packages below (apt-get update
# only when something is missing), runs `meson setup build` (or
# reconfigures an existing build/, which also picks up new golden and error
# test files), then `ninja -C build`.  Idempotent, and quiet when all is
# in place: tool output is shown only when a step fails.  BUILD_DIR
# overrides the build directory.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
packages=(libclang-19-dev libjansson-dev check meson ninja-build pkg-config cmake
	gcc libopenblas-dev python3
	# The Python package's tests (tests/python.sh): numpy and pytest for
	# Debian's python3, venv for `pip install ./python`.
	python3-numpy python3-pytest python3-venv
	# The hip backend's tests: hiprtc (in libamdhip64), the device
	# libraries it links, hipcc for ahead-of-time builds, and llvm-15's
	# objdump and readelf to read the code objects.
	hipcc libamdhip64-dev rocm-device-libs llvm-15
	# tools/fuzz.sh: clang-14 with libFuzzer and the sanitizer runtimes.
	clang-14 libclang-rt-14-dev
	# tests/tune_slurm.sh: a single-node Slurm (slurmctld, slurmd,
	# sbatch) with munge, started by the test on localhost.
	slurm-wlm munge)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null; then
			sudo=(sudo)
		else
			echo "setup.sh: missing packages (${missing[*]}); run as root" >&2
			exit 1
		fi
	fi
	echo "setup.sh: installing ${missing[*]}"
	log=$(mktemp)
	if ! { "${sudo[@]}" apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install \
			-y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		echo "setup.sh: apt-get failed" >&2
		exit 1
	fi
	rm -f "$log"
fi

# Run a step silently; show its output only if it fails.
quietly() {
	local log
	log=$(mktemp)
	if ! "$@" >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		echo "setup.sh: failed: $*" >&2
		return 1
	fi
	rm -f "$log"
}

if [ -f "$build/build.ninja" ]; then
	quietly meson setup --reconfigure "$build" "$root"
else
	quietly meson setup "$build" "$root"
fi
quietly ninja -C "$build"
