#!/usr/bin/env bash
# tests/repeat.sh — run test files again and again, to find flakes.  Run as
# root, after one tests/run_all.sh has installed everything.
#
#   bash tests/repeat.sh 021                 # tap/021_faults 10 times
#   bash tests/repeat.sh -n 5 003 024        # these two files, 5 rounds
#   bash tests/repeat.sh --pg 18 --jobs 4    # every TAP file, 10 rounds, on 18,
#                                            # 4 files at once
#   bash tests/repeat.sh --only regress,tap  # other stages too (default: tap)
#
# Each round is one `tests/run_all.sh --skip-setup --only STAGES --jobs N
# [FILES]`; the table at the end gives each file's passes out of its runs
# and its median and slowest time.  The output of every round that failed
# is kept in the log directory printed at the end (LSM_REPEAT_LOGS).  To
# test on a loaded machine, run two of these at once: each has its own
# scratch directories and sockets.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUNDS=10
ARGS=()
STAGES=tap
while [ $# -gt 0 ]; do
	case $1 in
	-n | --rounds) [ $# -ge 2 ] || lsm_die "$1 needs a number"; ROUNDS=$2; shift 2 ;;
	--only) [ $# -ge 2 ] || lsm_die "--only needs a stage list"; STAGES=$2; shift 2 ;;
	--pg | --jobs | -j) [ $# -ge 2 ] || lsm_die "$1 needs a value"; ARGS+=("$1" "$2"); shift 2 ;;
	--long) ARGS+=("$1"); shift ;;
	-h | --help) sed -n '2,17p' "$0"; exit 0 ;;
	-*) lsm_die "unknown option $1" ;;
	*) ARGS+=("$1"); shift ;;
	esac
done
case $ROUNDS in '' | *[!0-9]* | 0) lsm_die "-n needs a positive number" ;; esac
require_root

LOGS=${LSM_REPEAT_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/lsm_am.repeat.XXXXXX")}
mkdir -p "$LOGS"
RESULTS=$LOGS/results.tsv # round, job, ok|FAILED, seconds
: >"$RESULTS"
failed_rounds=0
for r in $(seq 1 "$ROUNDS"); do
	lsm_log "round $r of $ROUNDS: tests/run_all.sh --skip-setup --only $STAGES ${ARGS[*]}"
	out=$LOGS/round-$r.log
	bash "$LSM_REPO/tests/run_all.sh" --skip-setup --only "$STAGES" "${ARGS[@]}" >"$out" 2>&1
	rc=$?
	# "==> [3/27] tap/004_differential: ok, 95s"
	sed -nE 's/^==> \[[0-9]+\/[0-9]+\] ([^:]+): (ok|FAILED), ([0-9]+)s$/\1\t\2\t\3/p' "$out" |
		sed "s/^/$r\t/" >>"$RESULTS"
	tail -n 1 "$out"
	if [ $rc -eq 0 ]; then
		rm -f "$out"
	else
		failed_rounds=$((failed_rounds + 1))
		grep -E '^==> \[[0-9]+/[0-9]+\] .*FAILED' "$out"
		lsm_log "round $r failed: its output is in $out"
	fi
done

echo
echo "==================== repeat: $ROUNDS rounds ${ARGS[*]} ===================="
printf '  %-34s %8s %8s %8s\n' file passed median slowest
awk -F '\t' '{ n[$2]++; if ($3 == "ok") ok[$2]++; t[$2] = t[$2] " " $4 }
END {
	for (j in n) {
		m = split(substr(t[j], 2), a, " ")
		# insertion sort: a handful of values
		for (i = 2; i <= m; i++) { v = a[i] + 0; k = i - 1
			while (k >= 1 && a[k] + 0 > v) { a[k + 1] = a[k]; k-- } a[k + 1] = v }
		med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		printf "  %-34s %5d/%-2d %7ss %7ss\n", j, ok[j] + 0, n[j], med, a[m]
	}
}' "$RESULTS" | sort
echo "  logs: $LOGS"
total=$(wc -l <"$RESULTS")
nfail=$(awk -F '\t' '$3 != "ok"' "$RESULTS" | wc -l)
echo "$((total - nfail)) passed, $nfail failed"
[ "$nfail" -eq 0 ] && [ "$failed_rounds" -eq 0 ]
