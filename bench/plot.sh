#!/usr/bin/env bash
# bench/plot.sh DIR — PNG plots (gnuplot) from the CSV files in a results
# directory: acme_wal_per_row.png (a), ingest_throughput.png and
# ingest_wal_per_row.png (b).  Plots whose CSV is absent are skipped.  Needs
# gnuplot (bench/run.sh installs gnuplot-nox).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

DIR=${1:?usage: bench/plot.sh RESULTS_DIR}
[ -d "$DIR" ] || lsm_die "no such directory: $DIR"
command -v gnuplot >/dev/null || lsm_die "gnuplot is not installed (apt-get install gnuplot-nox)"
DATA=$DIR/plotdata
mkdir -p "$DATA"
term_png() { # term_png WIDTH HEIGHT
	if gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo; then
		echo "set terminal pngcairo size $1,$2 font 'sans,10' noenhanced"
	else
		echo "set terminal png size $1,$2 noenhanced"
	fi
}
TERM_PNG=$(term_png 1100 700)

# ---- (a) index WAL bytes per row, per batch
if [ -s "$DIR/acme.csv" ]; then
	{
		echo "# batch btree lsm"
		for c in load ordered random; do
			echo "$c $(med "$DIR/acme.csv" acme btree "$c" index_bytes_per_row) $(med "$DIR/acme.csv" acme lsm "$c" index_bytes_per_row)"
		done
	} | sed 's/^load /"load 1.45M (time order)" /; s/^ordered /"50k in time order" /; s/^random /"50k random orders" /' \
		>"$DATA/acme_wal.dat"
	gnuplot <<EOF
$TERM_PNG
set output '$DIR/acme_wal_per_row.png'
set title "(a) Acme Shop: WAL of the index relation per inserted row (pg_waldump --relation), median of runs"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel "index WAL bytes per row"
set yrange [0:*]
set grid ytics
set key top left
plot '$DATA/acme_wal.dat' using 2:xtic(1) title 'btree' linecolor rgb '#4472c4', \
     '' using 3 title 'lsm' linecolor rgb '#ed7d31', \
     '' using (\$0 - 0.15):2:(sprintf('%.0f', \$2)) with labels offset 0,0.7 notitle, \
     '' using (\$0 + 0.15):3:(sprintf('%.0f', \$3)) with labels offset 0,0.7 notitle
EOF
	lsm_log "wrote $DIR/acme_wal_per_row.png"
fi

# ---- (b) throughput over time, one panel per key kind
if [ -s "$DIR/ingest_timeseries.csv" ] && [ -s "$DIR/ingest.csv" ]; then
	mapfile -t keys < <(awk -F, 'NR > 1 && !s[$1]++ { print $1 }' "$DIR/ingest_timeseries.csv")
	mapfile -t vars < <(awk -F, 'NR > 1 && !s[$2]++ { print $2 }' "$DIR/ingest_timeseries.csv")
	for k in "${keys[@]}"; do
		for v in "${vars[@]}"; do
			awk -F, -v k="$k" -v v="$v" '$1 == k && $2 == v { print $3, $4 / 1000 }' \
				"$DIR/ingest_timeseries.csv" >"$DATA/ts_${k}_${v}.dat"
		done
	done
	colors=('#4472c4' '#ed7d31' '#70ad47' '#7030a0' '#c00000')
	{
		term_png 1100 $((300 * ${#keys[@]} + 60))
		echo "set output '$DIR/ingest_throughput.png'"
		echo "set multiplot layout ${#keys[@]},1 title '(b) sustained ingest: rows per second over time (5 s bins, 2 clients, 1,000-row INSERTs)'"
		echo "set grid; set xlabel 'seconds'; set ylabel 'thousand rows/s'; set yrange [0:*]; set key top right"
		for k in "${keys[@]}"; do
			mb=""
			for v in "${vars[@]}"; do
				mb="$mb $v $(med "$DIR/ingest.csv" ingest "$v" "$k" index_x_shared_buffers)x"
			done
			echo "set title '$k keys (index at the end, x shared_buffers:$mb)'"
			line="plot "
			i=0
			for v in "${vars[@]}"; do
				line="$line'$DATA/ts_${k}_${v}.dat' using 1:2 with linespoints pt 7 ps 0.4 lw 2 lc rgb '${colors[$i]}' title '$v', "
				i=$(((i + 1) % ${#colors[@]}))
			done
			echo "${line%, }"
		done
		echo "unset multiplot"
	} | gnuplot
	lsm_log "wrote $DIR/ingest_throughput.png"

	# ---- (b) WAL bytes per row: all WAL and the index relation's
	{
		printf '# key'
		for v in "${vars[@]}"; do printf ' %s_all %s_index' "$v" "$v"; done
		echo
		for k in "${keys[@]}"; do
			printf '%s' "$k"
			for v in "${vars[@]}"; do
				printf ' %s %s' "$(med "$DIR/ingest.csv" ingest "$v" "$k" wal_bytes_per_row)" \
					"$(med "$DIR/ingest.csv" ingest "$v" "$k" index_wal_bytes_per_row)"
			done
			echo
		done
	} >"$DATA/ingest_wal.dat"
	{
		echo "$TERM_PNG"
		echo "set output '$DIR/ingest_wal_per_row.png'"
		echo "set title '(b) sustained ingest: WAL bytes per row (all WAL; the index relation alone from pg_waldump)'"
		echo "set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8 border -1"
		echo "set ylabel 'WAL bytes per row'; set yrange [0:*]; set grid ytics; set key top left"
		line="plot "
		col=2
		i=0
		for v in "${vars[@]}"; do
			line="$line'$DATA/ingest_wal.dat' using $col:xtic(1) title '$v: all WAL' lc rgb '${colors[$i]}', "
			line="$line'' using $((col + 1)) title '$v: index WAL' lc rgb '${colors[$i]}' fillstyle pattern 4, "
			col=$((col + 2))
			i=$(((i + 1) % ${#colors[@]}))
		done
		echo "${line%, }"
	} | gnuplot
	lsm_log "wrote $DIR/ingest_wal_per_row.png"
fi
