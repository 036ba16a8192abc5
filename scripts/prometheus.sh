#!/usr/bin/env bash
# The proxy's metrics in a real Prometheus (Debian's package): a scripted
# agent (internal/cmd/agentloop) holds one long Anthropic conversation,
# streamed with adaptive thinking, through `compact proxy` (built from this
# checkout) in front of the scripted provider (internal/cmd/fakeupstream:
# signed thinking, prompt-cache billing, its window enforced, answers paced
# like a model's). The proxy's summaries are written by the conversation's
# own model through the same provider, ahead of time, as by default; the
# conversation is long enough for two compactions or more. Prometheus
# scrapes the proxy every second and loads examples/prometheus/rules.yml.
#
# Then it asks Prometheus's HTTP API (/api/v1/query) for the compactions,
# the tokens saved, the model calls and their tokens, the cache read share
# and the estimated cost, and checks each against what the run implies:
# compactions as many as the proxy's own /metrics says (two at least), the
# tokens and calls of requests and summaries equal to what the provider
# billed (its /fake/stats), the cost equal to that bill at the registry's
# list prices, one cache miss per compaction and none of another cause (the
# agent never changes its prefix), shares between 0 and 1, the recorded series equal to the
# counters they come from, nothing failed open. It prints a short report
# and exits non-zero on any mismatch. Every process it starts is stopped
# on exit; it takes about two minutes.
#
#   scripts/prometheus.sh
#
# Environment (defaults in brackets):
#   PROM_STEPS   shell steps of the conversation [45]
#   PROM_KEEP    a folder to keep the logs, configuration and reports in
#                (the proxy's, the provider's, Prometheus's) [none]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
steps=${PROM_STEPS:-45}
case "$steps" in '' | *[!0-9]*) echo "prometheus.sh: PROM_STEPS takes a whole number" >&2; exit 2 ;; esac
[ $# -eq 0 ] || { sed -n "2,/^set -e/p" "$0" | grep "^#" | sed "s/^# \{0,1\}//"; exit 2; }
# The window and tool output of proxy/loop_test.go's TestLongLoop on
# Anthropic with adaptive thinking: room beside the prefix for a summary
# that thinks first, and a compaction every dozen turns or so.
window=120000
lines=3000
model=claude-sonnet-4-5

die() { echo "prometheus.sh: $*" >&2; exit 1; }
. "$root/scripts/lib.sh"
command -v go >/dev/null || die "go is not on PATH"
# Debian's package would start a system-wide Prometheus on :9090 where
# services may start; this script runs its own on another port.
need prometheus promtool=prometheus jq curl

work=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -n "${PROM_KEEP:-}" ]; then
		mkdir -p "$PROM_KEEP" && cp -r "$work"/*.log "$work"/*.out "$work"/*.yml "$work"/*.json "$work"/*.txt "$PROM_KEEP"/ 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "--- building compact, fakeupstream and agentloop"
(cd "$root" && go build -o "$work/compact" ./cmd/compact &&
	go build -o "$work/fakeupstream" ./internal/cmd/fakeupstream &&
	go build -o "$work/agentloop" ./internal/cmd/agentloop)

"$work/fakeupstream" -listen 127.0.0.1:0 -window "$window" -steps "$steps" -output-lines "$lines" \
	-turn-first-byte 200ms -turn-stream 300ms -summary-first-byte 1s -summary-stream 1s \
	>"$work/fake.out" 2>"$work/fake.log" &
pids+=($!)
fake=$(started "$work/fake.out" "listening on")

"$work/compact" proxy --listen 127.0.0.1:0 --store memory --anthropic-upstream "http://$fake" \
	--window "$window" --log-format json >"$work/proxy.out" 2>"$work/proxy.log" &
pids+=($!)
proxy=$(started "$work/proxy.out" "listening on")

# Prometheus cannot report a port it picked itself: take a free one.
port=$(free_port prometheus)
prom=http://127.0.0.1:$port

cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $root/examples/prometheus/rules.yml
scrape_configs:
  - job_name: compact
    static_configs:
      - targets: ['$proxy']
EOF
if command -v promtool >/dev/null; then
	echo "--- promtool check config (and the rules it loads)"
	promtool check config "$work/prometheus.yml" >"$work/promtool.txt" 2>&1 || die "promtool: $(cat "$work/promtool.txt")"
	promtool check rules "$root/examples/prometheus/rules.yml" >>"$work/promtool.txt" 2>&1 || die "promtool: $(cat "$work/promtool.txt")"
fi
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
	--web.listen-address="127.0.0.1:$port" >"$work/prometheus.log" 2>&1 &
pids+=($!)
echo "provider http://$fake; proxy http://$proxy; $(prometheus --version 2>&1 | head -1) on $prom"

# query EXPR: the value of an instant query, a single number ("none"
# when the result is empty). Every EXPR here is one sum. The answer is
# {"status":"success","data":{"resultType":"vector","result":[{"metric":
# {...},"value":[TIME,"VALUE"]}]}}, or "status":"error" with "error"
# (https://prometheus.io/docs/prometheus/latest/querying/api/).
query() {
	local out
	out=$(curl -fsS --get --data-urlencode "query=$1" "$prom/api/v1/query") || die "query '$1' failed"
	echo "$out" | jq -r 'if .status != "success" then "error: \(.error)" elif (.data.result | length) == 0 then "none" else .data.result[0].value[1] end'
}

# The proxy's first scrape must come before the conversation, so that
# every counter starts at 0 in Prometheus and rate() sees all of it.
for i in $(seq 1 300); do
	curl -fsS "$prom/-/ready" >/dev/null 2>&1 && [ "$(query 'sum(up{job="compact"})')" = 1 ] && break
	[ "$i" -lt 300 ] || die "Prometheus did not scrape the proxy within 30 s: $(tail -5 "$work/prometheus.log")"
	sleep 0.1
done

echo "--- the conversation: $steps steps, streamed, adaptive thinking, $model, window $window"
start=$(date +%s)
"$work/agentloop" -base-url "http://$proxy" -api anthropic -stream -thinking adaptive -steps "$steps" \
	-model "$model" -session prometheus-sh >"$work/agent.json" 2>"$work/agent.log" ||
	die "the agent failed: $(cat "$work/agent.log"); proxy log: $(tail -5 "$work/proxy.log")"
echo "agent: $(cat "$work/agent.json") in $(($(date +%s) - start)) s"

# counters: the proxy's own counters (no histograms, no gauges), from its
# /metrics.
counters() {
	curl -fsS "http://$proxy/metrics" | grep -E '^compact_proxy_[a-z_]+_total[{ ]' || true
}
# Wait until the proxy is done (a summary written ahead may still be on
# its way), then until Prometheus has scraped it and evaluated the rules
# after that.
prev=""
for i in $(seq 1 60); do
	cur=$(counters)
	[ -n "$prev" ] && [ "$cur" = "$prev" ] && break
	[ "$i" -lt 60 ] || die "the proxy's counters still move a minute after the conversation"
	prev=$cur
	sleep 2
done
echo "$cur" >"$work/metrics.txt"
settled=$(date +%s)
for i in $(seq 1 100); do
	t=$(query 'min(timestamp(what:compact_proxy_cost_dollars:rate5m_per_hour))')
	s=$(query 'min(timestamp(compact_proxy_compactions_total))')
	if [ "$t" != none ] && [ "$s" != none ] && awk -v t="$t" -v s="$s" -v w="$settled" 'BEGIN { exit !(t > w + 1 && s > w + 1) }'; then break; fi
	[ "$i" -lt 100 ] || die "Prometheus has no scrape and rule evaluation after the run ended"
	sleep 0.2
done
curl -fsS "http://$fake/fake/stats" >"$work/fake.json" || die "no /fake/stats from the provider"
fake_stat() { jq -r "$1" "$work/fake.json"; }
# metric NAME: the sum of a counter's series on the proxy's /metrics.
metric() {
	awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $NF } END { printf "%.17g\n", s }' "$work/metrics.txt"
}

# check WHAT GOT OP WANT: one line of the report; OP is eq (equal to a
# millionth), ge, gt, in01 (0 < GOT < 1; WANT is ignored) or near (within
# 0.01).
failed=0
check() {
	local ok
	if [ "$2" = none ] || [ "$4" = none ] || [[ $2 == error* ]]; then
		ok=0
	else
		ok=$(awk -v g="$2" -v op="$3" -v w="$4" 'BEGIN {
			d = g - w; if (d < 0) d = -d; m = (w < 0 ? -w : w); if (m < 1) m = 1
			if (op == "eq") print (d <= 1e-6 * m)
			else if (op == "ge") print (g + 0 >= w + 0)
			else if (op == "gt") print (g + 0 > w + 0)
			else if (op == "in01") print (g + 0 > 0 && g + 0 < 1)
			else if (op == "near") print (d <= 0.01)
			else print 0 }')
	fi
	local want="$3 $4"
	[ "$3" = in01 ] && want="in (0, 1)"
	if [ "$ok" = 1 ]; then
		printf '  ok    %-68s %-22s %s\n' "$1" "$2" "$want"
	else
		printf '  FAIL  %-68s %-22s %s\n' "$1" "$2" "$want"
		failed=1
	fi
}
# share A B: A / (A + B) for the report, "none" when both are 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "none"; else printf "%.6f\n", a / b }'; }

turns=$(jq -r .turns "$work/agent.json")
echo
echo "--- what Prometheus says, and what the run implies"
echo "  ok?   query                                                                prometheus             expected"
compactions=$(query 'sum(compact_proxy_compactions_total)')
check "compactions: sum(compact_proxy_compactions_total)" "$compactions" eq "$(metric compact_proxy_compactions_total)"
check "  at least two" "$compactions" ge 2
swapped=$(query 'sum(compact_proxy_summaries_ahead_total{outcome="swapped"})')
check "  written ahead and swapped in" "$swapped" ge 1
saved=$(query 'sum(compact_proxy_tokens_saved_total)')
check "tokens saved by compactions: tokens_saved_total" "$saved" gt 0
check "  = tokens_before_total - tokens_after_total" "$saved" eq "$(query 'sum(compact_proxy_tokens_before_total) - sum(compact_proxy_tokens_after_total)')"
misses=$(query 'sum(compact_proxy_cache_misses_total)')
check "cache misses: cache_misses_total" "$misses" eq "$(metric compact_proxy_cache_misses_total)"
check "  one per compaction, explained by it" "$(query 'sum(compact_proxy_cache_misses_total{cause="compaction"})')" eq "$compactions"
check "  none other (the agent never changes its prefix)" "$misses" eq "$compactions"
check "  recorded: cause:compact_proxy_cache_misses:increase1h" "$(query 'sum(cause:compact_proxy_cache_misses:increase1h{cause="compaction"})')" gt 0
rsaved=$(query 'sum(compact_proxy_request_tokens_saved_total)')
check "tokens the requests did not send: request_tokens_saved" "$rsaved" gt 0
check "  = the proxy's /metrics" "$rsaved" eq "$(metric compact_proxy_request_tokens_saved_total)"
check "requests answered 200: requests_total" "$(query 'sum(compact_proxy_requests_total{api="anthropic",status="200"})')" eq "$turns"
check "  none other" "$(query 'sum(compact_proxy_requests_total)')" eq "$turns"
for what in requests summaries; do
	check "model calls, $what: model_calls_total" "$(query "sum(compact_proxy_model_calls_total{what=\"$what\"})")" eq "$(fake_stat ".$what.calls")"
	for kind in input cache_read cache_write output; do
		check "  $kind tokens: usage_tokens_total = the provider's bill" \
			"$(query "sum(compact_proxy_usage_tokens_total{what=\"$what\",kind=\"$kind\"})")" eq "$(fake_stat ".$what.$kind")"
	done
	share=$(query "sum(compact_proxy_usage_tokens_total{what=\"$what\",kind=\"cache_read\"}) / sum(compact_proxy_usage_tokens_total{what=\"$what\",kind=~\"input|cache_read|cache_write\"})")
	check "  cache read share (cache read / input total)" "$share" in01 -
	check "    = the provider's" "$share" eq "$(ratio "$(fake_stat ".$what.cache_read")" "$(fake_stat ".$what.input + .$what.cache_read + .$what.cache_write")")"
	check "    recorded: what:compact_proxy_cache_read_share:ratio_rate5m" "$(query "sum(what:compact_proxy_cache_read_share:ratio_rate5m{what=\"$what\"})")" near "$share"
	cost=$(query "sum(compact_proxy_cost_dollars_total{what=\"$what\"})")
	check "  estimated cost, USD: cost_dollars_total" "$cost" gt 0
	check "    = the provider's bill at list prices" "$cost" eq "$(fake_stat ".$what.cost_usd")"
	check "    recorded per hour: what:compact_proxy_cost_dollars:rate5m_per_hour" "$(query "sum(what:compact_proxy_cost_dollars:rate5m_per_hour{what=\"$what\"})")" gt 0
	check "  unpriced calls: unpriced_calls_total" "$(query "sum(compact_proxy_unpriced_calls_total{what=\"$what\"})")" eq 0
done
summaries=$(query 'sum(compact_proxy_model_calls_total{what="summaries"})')
check "summary calls >= compactions" "$summaries" ge "$compactions"
check "recorded: compact_proxy_request_tokens_saved:rate5m" "$(query 'compact_proxy_request_tokens_saved:rate5m')" gt 0
check "recorded: compactions in the last hour (increase1h)" "$(query 'sum(reason_summarizer:compact_proxy_compactions:increase1h)')" ge "$compactions"
check "failed open: fail_open_total" "$(query 'sum(compact_proxy_fail_open_total)')" eq 0
check "fallbacks: fallbacks_total" "$(query 'sum(compact_proxy_fallbacks_total)')" eq 0
check "passthrough bytes modified" "$(query 'sum(compact_proxy_passthrough_bytes_modified_total)')" eq 0
check "alerts firing" "$(query 'count(ALERTS{alertstate="firing"}) or vector(0)')" eq 0
check "provider: requests over the window" "$(fake_stat .overflows)" eq 0
check "provider: thinking refusals" "$(fake_stat .thinking_refusals)" eq 0
check "provider: pairing problems" "$(fake_stat '.problems | length')" eq 0
check "provider: largest request <= window" "$window" ge "$(fake_stat .max_tokens)"

echo
echo "compactions by reason and summarizer:"
curl -fsS --get --data-urlencode 'query=sum by (reason, summarizer) (compact_proxy_compactions_total) > 0' "$prom/api/v1/query" |
	jq -r '.data.result[] | "  \(.metric.reason)/\(.metric.summarizer): \(.value[1])"'
echo "summaries written ahead, by outcome:"
curl -fsS --get --data-urlencode 'query=sum by (outcome) (compact_proxy_summaries_ahead_total) > 0' "$prom/api/v1/query" |
	jq -r '.data.result[] | "  \(.metric.outcome): \(.value[1])"'
if [ "$failed" != 0 ]; then
	echo
	echo "proxy log (last lines):" >&2
	tail -5 "$work/proxy.log" >&2
	die "the metrics in Prometheus do not match the run"
fi
echo "--- ok"
