#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# hostile_metrics.sh - the metrics endpoint against a local user (review C5, C9).  Root
# leaktop on the whole system, as the service runs it, with --listen on loopback and
# --listen-auth (HTTP basic auth, a root-only credentials file) and --listen-token; a real
# Prometheus (Debian's, on loopback, its storage in the temporary directory) scrapes it every
# second with basic_auth.  Then nobody opens ATTACK_CONNS connections from 127.0.0.1-5, each
# sending a request head one byte every 2 s and opening a new one whenever leaktop closes it,
# for ATTACK_S seconds:
#   - every scrape Prometheus made during the attack succeeded (up == 1), one a second;
#   - the attacker did hold more connections at once than the old limits (16, 4 per address)
#     and leaktop closed the slow ones (they had to reconnect);
#   - without credentials, or with wrong ones, 401 with WWW-Authenticate; with the user and
#     password, or the bearer token, 200;
#   - a credentials file group members may read is refused at start: exit 1, one line;
#   - leaktop survived (hostile_survived).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"

require_root

T=$E2E_TMP/hm
mkdir -p "$T"
ATTACK_CONNS=${ATTACK_CONNS:-80}
ATTACK_S=${ATTACK_S:-15}

for tool in prometheus curl ss /usr/bin/python3; do
	command -v "$tool" >/dev/null || {
		echo "FAIL $(basename "$0"): $tool is missing; run make deps"
		exit 1
	}
done

prom_and_leaktop_ports || exit 1
PROM=http://127.0.0.1:$PROM_PORT
LT_URL=http://127.0.0.1:$LT_PORT/metrics

# The credentials: root's, mode 0600.
printf 'prom:open sesame 42\n' >"$T/auth"
printf 'tok-9d1c57e2a4\n' >"$T/token"
chmod 600 "$T/auth" "$T/token"

# The attacker: slow clients, each reopened when closed; its counts as JSON on stdout.
cat >"$T/slow.py" <<'EOF'
import json, socket, sys, time

port, n, dur = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
socks = [None] * n
opened = reopened = refused = max_open = 0


def connect(i):
    s = socket.socket()
    s.bind(("127.0.0.%d" % (1 + i % 5), 0))
    s.settimeout(1)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    return s


end = time.time() + dur
while time.time() < end:
    for i in range(n):
        s = socks[i]
        if s is not None:
            try:
                s.sendall(b"X")
                continue
            except OSError:
                s.close()
                reopened += 1
        try:
            socks[i] = connect(i)
            opened += 1
        except OSError:
            socks[i] = None
            refused += 1
    # A closed peer shows on the next send; count what is still open now.
    max_open = max(max_open, sum(1 for s in socks if s is not None))
    time.sleep(2)
print(json.dumps({"opened": opened, "reopened": reopened, "refused": refused,
                  "max_open": max_open}))
EOF
chmod 644 "$T/slow.py"

prom_ready() { curl -sf "$PROM/-/ready" >/dev/null; }

# prom_value PROMQL [TIME]: the first value of an instant query ("" if none).
prom_value() {
	local at=${2:+--data-urlencode time=$2}
	# shellcheck disable=SC2086
	curl -sf --get "$PROM/api/v1/query" --data-urlencode "query=$1" $at |
		jq -r '.data.result[0].value[1] // ""'
}

start_prometheus() {
	cat >"$T/prometheus.yml" <<-EOF
	global:
	  scrape_interval: 1s
	  scrape_timeout: 1s
	scrape_configs:
	  - job_name: leaktop
	    basic_auth:
	      username: prom
	      password: 'open sesame 42'
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

# Prometheus's good scrapes of leaktop so far: at least $1.
scrapes_at_least() {
	local n
	n=$(prom_value 'sum_over_time(up{job="leaktop"}[5m])')
	[ "${n:-0}" -ge "$1" ] 2>/dev/null
}

# Has Prometheus stored a scrape of leaktop made after $1 (seconds since the epoch)?
scraped_after() {
	local ts
	ts=$(prom_value 'timestamp(up{job="leaktop"})')
	[ -n "$ts" ] && awk -v a="$ts" -v b="$1" 'BEGIN { exit !(a > b) }'
}

http_code() { curl -s -o /dev/null -w '%{http_code}' "$@" "$LT_URL"; }

# ---------------------------------------------------------------- scenario

T_ATTACK="" T_END="" ATTACK_JSON=""
attack() {
	start_prometheus || return 1
	hostile_start "$T/lt" --listen "127.0.0.1:$LT_PORT" --listen-auth "$T/auth" \
		--listen-token "$T/token" || return 1
	WAIT_LIMIT=60 wait_until "3 good scrapes before the attack" scrapes_at_least 3 ||
		return 1
	T_ATTACK=$(now_s)
	as_attacker /usr/bin/python3 "$T/slow.py" "$LT_PORT" "$ATTACK_CONNS" "$ATTACK_S" \
		>"$T/attack.json" 2>"$T/attack.err" ||
		fail_because "the attacker failed: $(tail -n 3 "$T/attack.err")" || return 1
	T_END=$(now_s)
	ATTACK_JSON=$(cat "$T/attack.json")
	# Prometheus has stored a scrape made after the attack (good or not).
	WAIT_LIMIT=10 wait_until "a scrape after the attack in Prometheus" scraped_after "$T_END"
}

# ---------------------------------------------------------------- tests

test_hostile_metrics_slow_clients_do_not_stop_prometheus_scraping_every_second() {
	local range bad good
	scenario attack || return 1
	range=$(awk -v a="$T_ATTACK" -v b="$T_END" 'BEGIN { printf "%ds", b - a }')
	# Every scrape within the attack's window succeeded, and they came one a second.
	bad=$(prom_value "count_over_time(up{job=\"leaktop\"}[$range]) - sum_over_time(up{job=\"leaktop\"}[$range])" "$T_END")
	good=$(prom_value "sum_over_time(up{job=\"leaktop\"}[$range])" "$T_END")
	expect_eq "failed scrapes during the attack (good: $good, attacker: $ATTACK_JSON)" 0 \
		"$bad" || return 1
	[ "${good:-0}" -ge $((ATTACK_S * 2 / 3)) ] ||
		fail_because "only $good good scrapes in the attack's ${range} (one a second" \
			"expected); attacker: $ATTACK_JSON"
}

test_hostile_metrics_the_attacker_held_more_connections_than_the_old_limit_and_was_cut() {
	local max_open reopened
	scenario attack || return 1
	max_open=$(jq -r .max_open <<<"$ATTACK_JSON")
	reopened=$(jq -r .reopened <<<"$ATTACK_JSON")
	[ "$max_open" -gt 16 ] ||
		fail_because "the attacker held at most $max_open connections: $ATTACK_JSON" ||
		return 1
	[ "$reopened" -gt 0 ] ||
		fail_because "leaktop closed none of the slow connections: $ATTACK_JSON"
}

test_hostile_metrics_without_credentials_401_with_them_200() {
	scenario attack || return 1
	local hdr
	expect_eq "no credentials" 401 "$(http_code)" || return 1
	hdr=$(curl -s -D - -o /dev/null "$LT_URL" | tr -d '\r' | grep -i '^www-authenticate:')
	expect_match "WWW-Authenticate" '^[Ww][Ww][Ww]-[Aa]uthenticate: Basic realm="leaktop"' \
		"$hdr" || return 1
	expect_eq "wrong password" 401 "$(http_code -u 'prom:open sesame 43')" || return 1
	expect_eq "wrong user" 401 "$(http_code -u 'root:open sesame 42')" || return 1
	expect_eq "wrong token" 401 "$(http_code -H 'Authorization: Bearer tok-9d1c57e2a5')" ||
		return 1
	expect_eq "user and password" 200 "$(http_code -u 'prom:open sesame 42')" || return 1
	expect_eq "bearer token" 200 "$(http_code -H 'Authorization: Bearer tok-9d1c57e2a4')"
}

test_hostile_metrics_leaktop_survived_the_slow_clients() {
	scenario attack || return 1
	hostile_survived "$T/lt" "$T_ATTACK" 'metrics endpoint|connection'
}

test_hostile_metrics_a_credentials_file_others_may_read_is_refused_at_start() {
	local f=$T/auth-shared
	printf 'prom:x\n' >"$f"
	chmod 640 "$f"
	lt_fg "$T/shared.out" "$T/shared.err" -q -d 1 --listen "127.0.0.1:$LT_PORT" \
		--listen-auth "$f" -- true
	expect_eq "exit status" 1 "$LT_STATUS" || return 1
	expect_eq "stderr lines ($(cat "$T/shared.err"))" 1 "$(stderr_lines "$T/shared.err")" ||
		return 1
	expect_match "message" "refusing --listen-auth .*auth-shared.*chmod 600" \
		"$(cat "$T/shared.err")"
}

run_tests
