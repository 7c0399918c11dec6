#!/usr/bin/env bash
# doctest_self.sh - the doc test's own test: a page of tests/doctest/ must
# pass (good.md) or fail with the message given.
#
#   doctest_self.sh TILEC SRCROOT PAGE [WANT]
#
# Without WANT the page must pass (status 0) and report its skipped
# blocks with their reasons; with WANT it must fail (status 1, not a
# crash: a Python traceback fails the test) with WANT in its report.
set -u
tilec=$1 root=$2 page=$3 want=${4-}
out=$(python3 "$root/tests/doctest.py" "$tilec" "$root" "$page" 2>&1)
status=$?
echo "$out"
if echo "$out" | grep -q Traceback; then
	echo "FAIL: doctest.py crashed"
	exit 1
fi
if [ -z "$want" ]; then
	[ $status -eq 0 ] || { echo "FAIL: status $status, not 0"; exit 1; }
	for why in "needs no-such-tool-anywhere, not on PATH" "the test's own skip"; do
		echo "$out" | grep -qF "skipped $page:" ||
			{ echo "FAIL: no skipped blocks listed"; exit 1; }
		echo "$out" | grep -qF "$why" ||
			{ echo "FAIL: the skip '$why' is not reported"; exit 1; }
	done
	exit 0
fi
[ $status -eq 1 ] || { echo "FAIL: status $status, not 1"; exit 1; }
echo "$out" | grep -qF -- "$want" || { echo "FAIL: no '$want' in the report"; exit 1; }
