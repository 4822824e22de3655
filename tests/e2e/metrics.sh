#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# metrics.sh - `--listen`: the OpenMetrics endpoint, scraped by a real Prometheus (Debian's
# prometheus, started here on loopback with its storage in the temporary directory, scraping
# leaktop every second):
#   - Prometheus scrapes it without an error (OpenMetrics, negotiated), and the value it
#     stored for leaktop_heap_outstanding_bytes of the traced pid at each scrape is the one
#     the JSON snapshot of the same interval has (joined on leaktop_elapsed_seconds);
#   - a flagged call site is a site series, bounded by --metrics-sites, named by its
#     function and line, with the JSON's stack id;
#   - `promtool check metrics` finds nothing to say about the Prometheus text format;
#   - a port in use is refused in one line; a port alone listens on loopback only; other
#     paths and methods are refused; an idle client does not keep leaktop from ending.
source "$(dirname "$0")/lib.sh"

require_root
require_built steady_grow

T=$E2E_TMP/metrics
mkdir -p "$T"

for tool in prometheus promtool curl ss; do
	command -v "$tool" >/dev/null || {
		echo "FAIL $(basename "$0"): $tool is missing; run make deps"
		exit 1
	}
done

prom_and_leaktop_ports || exit 1
PROM=http://127.0.0.1:$PROM_PORT

# prom_query PROMQL: the data of an instant query, now.
prom_query() {
	curl -sf --get "$PROM/api/v1/query" --data-urlencode "query=$1" | jq -c '.data.result'
}

prom_ready() { curl -sf "$PROM/-/ready" >/dev/null; }

start_prometheus() {
	cat >"$T/prometheus.yml" <<-EOF
	global:
	  scrape_interval: 1s
	  scrape_timeout: 1s
	scrape_configs:
	  - job_name: leaktop
	    static_configs:
	      - targets: ['127.0.0.1:$LT_PORT']
	EOF
	prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prom-data" \
		--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn \
		>"$T/prometheus.log" 2>&1 &
	BG_PIDS+=("$!")
	wait_until "Prometheus to be ready" prom_ready ||
		fail_because "Prometheus did not start; its log: $(tail -c 300 "$T/prometheus.log")"
}

# Scrapes Prometheus stored of the traced pid's heap bytes, at least $1.
LEAK_PID=""
scraped_at_least() {
	local n
	n=$(prom_query "count_over_time(leaktop_heap_outstanding_bytes{pid=\"$LEAK_PID\"}[5m])" |
		jq -r '.[0].value[1] // 0')
	[ "${n:-0}" -ge "$1" ]
}

# ... and a site series of it.
site_scraped() {
	[ "$(prom_query "leaktop_site_outstanding_objects{pid=\"$LEAK_PID\"}" | jq length)" -ge 1 ]
}

leak_pid_known() {
	LEAK_PID=$(complete_lines "$T/out.jsonl" |
		jq -r '.processes[] | select(.comm == "steady_grow") | .pid' 2>/dev/null | head -n 1)
	[ -n "$LEAK_PID" ]
}

# One run: steady_grow (4 KiB every 20 ms) under leaktop -- with --listen, JSON Lines of
# every interval beside it, scraped by Prometheus until it holds 8 samples and a site.
prom_run() {
	start_prometheus || return 1
	mkdir -p "$T/dir"
	lt_bg "$T/out.jsonl" "$T/err" -q -i 0.5 --metrics-sites 1 \
		--listen "127.0.0.1:$LT_PORT" -j - -- "$PROGS/steady_grow" "$T/dir" 4096 20
	wait_until "the program in a snapshot (stderr: $(cat "$T/err"))" leak_pid_known || return 1
	WAIT_LIMIT=60 wait_until "8 scrapes of pid $LEAK_PID in Prometheus" \
		scraped_at_least 8 || return 1
	WAIT_LIMIT=60 wait_until "a site series of pid $LEAK_PID" site_scraped || return 1
	curl -s -D "$T/prom.hdr" "http://127.0.0.1:$LT_PORT/metrics" >"$T/prom.txt"
	curl -s -D "$T/om.hdr" -H 'Accept: application/openmetrics-text;version=1.0.0' \
		"http://127.0.0.1:$LT_PORT/metrics" >"$T/om.txt"
	curl -sf "$PROM/api/v1/targets" >"$T/targets.json"
	touch "$T/dir/stop" "$T/dir/quit"
	wait_exit "$LT_PID" || return 1
	expect_eq "leaktop's exit status (stderr: $(cat "$T/err"))" 0 "$WAIT_STATUS" || return 1
	# Every sample stored, raw: the heap bytes and the run time of the same scrapes.
	prom_query "leaktop_heap_outstanding_bytes{pid=\"$LEAK_PID\"}[5m]" >"$T/heap.json"
	prom_query "leaktop_elapsed_seconds[5m]" >"$T/elapsed.json"
	prom_query "leaktop_site_outstanding_objects{pid=\"$LEAK_PID\"}[5m]" >"$T/sites.json"
	prom_query "leaktop_flagged_sites[5m]" >"$T/flagged.json"
	complete_lines "$T/out.jsonl" >"$T/all.jsonl"
}

test_metrics_prometheus_scrapes_the_endpoint_without_errors() {
	scenario prom_run || return 1
	local got
	got=$(jq -c '[.data.activeTargets[] | [.health, .lastError]]' "$T/targets.json")
	expect_eq "Prometheus's view of the target" '[["up",""]]' "$got"
}

test_metrics_heap_bytes_in_prometheus_equal_the_json_of_the_same_interval() {
	scenario prom_run || return 1
	local got
	# Pairs [elapsed_s, bytes in Prometheus, bytes in the JSON of that elapsed_s] for every
	# scrape; the JSON's interval found by its elapsed_s (the same number, printed twice).
	got=$(jq -c -n --slurpfile heap "$T/heap.json" --slurpfile el "$T/elapsed.json" \
		--slurpfile snaps <(jq -c . "$T/all.jsonl" | jq -s -c .) --argjson pid "$LEAK_PID" '
		($el[0][0].values | map({key: (.[0] | tostring), value: (.[1] | tonumber)}) |
		 from_entries) as $at |
		[$heap[0][0].values[] | [$at[.[0] | tostring], (.[1] | tonumber)] as [$e, $b] |
		 [$e, $b, ([$snaps[0][] | select((.elapsed_s - $e) | fabs < 1e-6) |
			    .processes[] | select(.pid == $pid) | .heap.outstanding_bytes] | first)]]')
	[ "$(jq length <<<"$got")" -ge 8 ] ||
		fail_because "fewer than 8 scrapes to compare: $got" || return 1
	[ "$(jq '[.[] | select(.[2] == null)] | length' <<<"$got")" = 0 ] ||
		fail_because "a scrape with no JSON snapshot of its interval: $got" || return 1
	[ "$(jq '[.[] | select(.[1] != .[2])] | length' <<<"$got")" = 0 ] ||
		fail_because "Prometheus and the JSON differ ([elapsed, prometheus, json]): $got" ||
		return 1
	# And the values moved (the program leaks all along): not one number compared 8 times.
	[ "$(jq '[.[] | .[1]] | unique | length' <<<"$got")" -ge 4 ] ||
		fail_because "the heap bytes hardly changed between scrapes: $got"
}

test_metrics_flagged_site_is_one_bounded_series_with_the_json_stack_id() {
	scenario prom_run || return 1
	local ids flagged names json_ids
	ids=$(jq -c '[.[] | .metric.site_id] | unique' "$T/sites.json")
	names=$(jq -c '[.[] | .metric.site] | unique' "$T/sites.json")
	flagged=$(jq '[.[0].values[] | .[1] | tonumber] | max' "$T/flagged.json")
	json_ids=$(jq -c -s --argjson pid "$LEAK_PID" '[.[] | .processes[] | select(.pid == $pid) |
		.sites[] | select(.flagged) | .stack_id] | unique' "$T/all.jsonl")
	# --metrics-sites 1: one site series at a time, though both the heap site and the mmap
	# site of the leak are flagged.
	[ "$flagged" -ge 2 ] ||
		fail_because "expected 2 flagged sites (heap and mmap) at some point, max $flagged" ||
		return 1
	[ "$(jq length <<<"$ids")" = 1 ] ||
		fail_because "--metrics-sites 1 exported site ids $ids" || return 1
	expect_match "site name" '^\["grow_leak steady_grow\.c:[0-9]+"\]$' "$names" || return 1
	[ "$(jq --argjson j "$json_ids" '.[0] as $i | $j | index($i) != null' <<<"$ids")" = true ] ||
		fail_because "site id $ids is none of the JSON's flagged stack ids $json_ids"
}

test_metrics_prometheus_format_passes_promtool_check() {
	scenario prom_run || return 1
	local out
	grep -qi '^content-type: text/plain; version=0.0.4' "$T/prom.hdr" ||
		fail_because "content type: $(grep -i content-type "$T/prom.hdr")" || return 1
	grep -q '^leaktop_heap_outstanding_bytes{pid=' "$T/prom.txt" ||
		fail_because "no heap series in the page: $(head -c 300 "$T/prom.txt")" || return 1
	out=$(promtool check metrics <"$T/prom.txt" 2>&1) ||
		fail_because "promtool failed: $out" || return 1
	expect_eq "promtool's findings" "" "$out"
}

test_metrics_openmetrics_is_negotiated_and_ends_with_eof() {
	scenario prom_run || return 1
	grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$T/om.hdr" ||
		fail_because "content type: $(grep -i content-type "$T/om.hdr")" || return 1
	expect_eq "last line" "# EOF" "$(tail -n 1 "$T/om.txt")" || return 1
	grep -q '^# TYPE leaktop_heap_allocs counter$' "$T/om.txt" &&
		grep -q '^leaktop_heap_allocs_total{' "$T/om.txt" ||
		fail_because "counter family and sample names: $(grep heap_allocs "$T/om.txt")"
}

test_metrics_listen_refuses_a_port_in_use_in_one_line() {
	scenario prom_run || return 1
	lt_fg "$T/inuse.out" "$T/inuse.err" -q -d 2 --listen "127.0.0.1:$PROM_PORT" -- true
	expect_eq "exit status" 1 "$LT_STATUS" || return 1
	expect_eq "stderr lines ($(cat "$T/inuse.err"))" 1 "$(stderr_lines "$T/inuse.err")" ||
		return 1
	expect_match "message" "127\.0\.0\.1:$PROM_PORT.*in use" "$(cat "$T/inuse.err")"
}

# A run with --listen PORT (no address), held until the test says quit.
PORT_ONLY=""
port_only_listening() { [ -n "$(ss -Htln "sport = :$PORT_ONLY")" ]; }
metrics_served() {
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT_ONLY/metrics")" = 200 ]
}
port_only_run() {
	PORT_ONLY=$(free_port) || return 1
	mkdir -p "$T/po"
	lt_bg "$T/po.out" "$T/po.err" -q -i 0.2 --listen "$PORT_ONLY" -- \
		"$PROGS/steady_grow" "$T/po" 0 50
	wait_until "leaktop to listen on $PORT_ONLY" port_only_listening || return 1
	wait_until "leaktop's first interval on /metrics" metrics_served || return 1
	ss -Htln "sport = :$PORT_ONLY" | awk '{print $4}' >"$T/po.listen"
}

test_metrics_listen_with_a_port_alone_binds_loopback_only() {
	scenario port_only_run || return 1
	expect_eq "listening sockets" "127.0.0.1:$PORT_ONLY" "$(cat "$T/po.listen")"
}

test_metrics_endpoint_refuses_other_paths_and_methods() {
	scenario port_only_run || return 1
	local u=http://127.0.0.1:$PORT_ONLY
	expect_eq "GET /nope" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$u/nope")" || return 1
	expect_eq "POST /metrics" 405 \
		"$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x=1 "$u/metrics")" || return 1
	expect_eq "HEAD /metrics" 200 "$(curl -s -o /dev/null -w '%{http_code}' -I "$u/metrics")"
}

test_metrics_an_idle_client_does_not_keep_leaktop_from_ending() {
	scenario port_only_run || return 1
	# A client that connects and says nothing, then SIGINT: leaktop ends, status 0.
	exec 7<>"/dev/tcp/127.0.0.1/$PORT_ONLY" ||
		fail_because "cannot connect to $PORT_ONLY" || return 1
	kill -INT "$LT_PID"
	wait_exit "$LT_PID" || { exec 7>&-; return 1; }
	exec 7>&-
	touch "$T/po/quit"
	expect_eq "exit status (stderr: $(cat "$T/po.err"))" 0 "$WAIT_STATUS" || return 1
	[ -z "$(ss -Htln "sport = :$PORT_ONLY")" ] ||
		fail_because "port $PORT_ONLY still listened on after leaktop ended"
}

test_metrics_json_names_the_cgroup_proc_shows() {
	scenario prom_run || return 1
	local want got
	# The test's own cgroup (steady_grow ran in it): the memory controller's path on v1,
	# the unified path on v2.
	want=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
	[ -n "$want" ] || want=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
	got=$(jq -r -s --argjson pid "$LEAK_PID" '[.[] | .processes[] | select(.pid == $pid) |
		.cgroup] | last' "$T/all.jsonl")
	expect_eq "cgroup of pid $LEAK_PID" "$want" "$got"
}

run_tests
