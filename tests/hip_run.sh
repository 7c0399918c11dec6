#!/usr/bin/env bash
# hip_run.sh - `tilec run -t hip`: a checked run on an AMD GPU, a clean
# refusal without one.
#
# usage: hip_run.sh TILEC SRCROOT
#
# Runs gemm, flash attention (causal too) and softmax on ragged shapes with
# `tilec run -t hip`.  On a machine with an AMD GPU each must pass the check
# against the reference interpreter (exit 0).  Without one each must stop
# before the check with exit status 2 and a sentence naming what is
# missing (no AMD GPU, no HIP runtime, no hiprtc), never crash.  Exit
# status: 0 as expected, 1 otherwise.
set -u

if [ $# -ne 2 ]; then
	echo "usage: hip_run.sh TILEC SRCROOT" >&2
	exit 2
fi
tilec=$(realpath "$1")
cd "$2" || exit 1

failed=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT
run() { # SAMPLE ARGS...
	local sample=$1
	shift
	"$tilec" run "samples/$sample" -t hip "$@" 2>"$err"
	local status=$?
	case $status in
	0) echo "ok: $sample $*: checked on the GPU" ;;
	2)
		if grep -q -E "no AMD GPU|no HIP runtime|hiprtc is not available" "$err"; then
			echo "ok: $sample $*: refused cleanly: $(head -c 300 "$err")"
		else
			echo "FAIL: $sample $*: stopped (2) without naming what is missing:"
			cat "$err"
			failed=1
		fi
		;;
	*)
		echo "FAIL: $sample $*: exit status $status"
		cat "$err"
		failed=1
		;;
	esac
}

run gemm.c --shape M=100,N=130,K=70
run flash_attention.c --shape B=2,S=130,H=3
run flash_attention.c -D CAUSAL=1 --shape B=1,S=200,H=2
run softmax.c --shape M=7,N=1500
exit $failed
