#!/usr/bin/env bash
# ray_carry.sh - Ray and what it needs, unpacked for another machine's
# Python, as one archive to carry where nothing can be installed from a
# package index (the GPU machine of docs/tuning.md, "Work units"):
#
#   tools/ray_carry.sh OUT.tar.xz [PYTHON_VERSION]     (default 3.12)
#
# pip (here, where the index is reachable) installs the manylinux wheels
# of ray for that Python into a folder raysite/; the parts a tuning run
# never loads go (Ray's Java workers, the dashboard's web client, RLlib,
# compiled bytecode: 260 MB -> 165 MB), and the rest is packed with xz
# (about 32 MB: the carry limit is 64 MiB).  There:
#
#   tar xJf OUT.tar.xz -C /tmp && export PYTHONPATH=/tmp/raysite
#
# (or a .pth file naming /tmp/raysite, which lets the packages already
# there win).  RAY_VERSION picks the version (default: pip's newest).
set -euo pipefail
out=${1:?usage: tools/ray_carry.sh OUT.tar.xz [PYTHON_VERSION]}
py=${2:-3.12}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 \
	manylinux_2_5_x86_64 manylinux1_x86_64; do
	platforms+=(--platform "$p")
done
python3 -m pip install -q --target "$work/raysite" --only-binary=:all: \
	--python-version "$py" --implementation cp "${platforms[@]}" \
	"ray${RAY_VERSION:+==$RAY_VERSION}"
find "$work/raysite" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$work/raysite/ray/jars" "$work/raysite/ray/dashboard/client/build" \
	"$work/raysite/ray/rllib"
ls -d "$work"/raysite/ray-*.dist-info | sed 's|.*/||; s|.dist-info||'
tar cJf "$out.part" -C "$work" raysite
mv "$out.part" "$out"
echo "$out: $(($(stat -c %s "$out") / 1024)) KiB"
