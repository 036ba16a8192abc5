// report.mjs turns the raw results of scripts/bench-vs-pi.sh into the
// tables it prints: for each round R, DIR holds pi.R.json (pi.mjs's
// output) and go.R.txt (the output of compact's Go benchmarks).
//
//   node report.mjs DIR
//
// Per round, pi's figure is the mean of its timed calls, the same
// statistic as Go's ns/op (total time over b.N), and the ratio is pi's
// over compact's. Across rounds it prints the median of each side, the
// median and range (min-max) of the ratios, and each side's spread, the
// range over rounds divided by the median, which shows how noisy the
// machine was. Then the append-and-check times by conversation length
// and whether each speed goal of issue 13 is met.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
if (!dir) {
	process.stderr.write("usage: node report.mjs DIR\n");
	process.exit(2);
}

// step: our name, pi.mjs's key, the Go benchmark.
const steps = [
	{ name: "parse + migrate", pi: "parse", go: "BenchmarkParse", goal: 2.5 },
	{ name: "load", pi: "load", go: "BenchmarkLoad", goal: 3 },
	{ name: "plan, first on a fresh session", pi: "plan", go: "BenchmarkPlanFirst", goal: 3 },
];

const rounds = readdirSync(dir)
	.map((f) => /^pi\.(\d+)\.json$/.exec(f))
	.filter(Boolean)
	.map((m) => Number(m[1]))
	.sort((a, b) => a - b);
if (rounds.length === 0) {
	process.stderr.write(`report.mjs: no pi.N.json in ${dir}\n`);
	process.exit(1);
}

// goBench parses `go test -bench` output into name -> ns/op, the name
// without its -GOMAXPROCS suffix.
function goBench(text) {
	const out = new Map();
	for (const line of text.split("\n")) {
		const m = /^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns\/op/.exec(line);
		if (m) out.set(m[1], Number(m[2]));
	}
	return out;
}

const median = (xs) => {
	const s = [...xs].sort((a, b) => a - b);
	const k = s.length >> 1;
	return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
};
const spread = (xs) => (xs.length < 2 ? "-" : `${Math.round(((Math.max(...xs) - Math.min(...xs)) / median(xs)) * 100)} %`);
const ms = (ns) => (ns / 1e6 < 0.1 ? (ns / 1e6).toFixed(3) : ns / 1e6 < 10 ? (ns / 1e6).toFixed(2) : (ns / 1e6).toFixed(1));
const x = (r) => `${r.toFixed(2)}x`;

const pi = rounds.map((r) => JSON.parse(readFileSync(join(dir, `pi.${r}.json`), "utf8")));
const go = rounds.map((r) => goBench(readFileSync(join(dir, `go.${r}.txt`), "utf8")));
const files = Object.keys(pi[0].files);

const lines = [];
const say = (s = "") => lines.push(s);
say(`pi ${pi[0].pi} on node ${pi[0].node} (keepRecentTokens ${pi[0].settings.keepRecentTokens}, reserveTokens ${pi[0].settings.reserveTokens}); ${rounds.length} interleaved round(s).`);
say("Per round: pi = mean of its timed calls, compact = Go ns/op; ratio = pi / compact (above 1: compact is faster).");
say("Medians over rounds; spread = (max - min) / median over rounds.");
say();
say("| step | file | pi (ms) | compact (ms) | ratio | ratio range | pi spread | compact spread |");
say("|---|---|---:|---:|---:|---:|---:|---:|");
const worst = new Map(); // step name -> smallest median ratio over files
for (const st of steps) {
	for (const f of files) {
		const p = [], c = [], ratio = [];
		rounds.forEach((r, i) => {
			const pv = pi[i].files[f]?.[st.pi]?.mean;
			const cv = go[i].get(`${st.go}/${f}`);
			if (pv === undefined || cv === undefined) return;
			p.push(pv);
			c.push(cv);
			ratio.push(pv / cv);
		});
		if (ratio.length === 0) {
			say(`| ${st.name} | ${f} | missing | missing | | | | |`);
			worst.set(st.name, NaN);
			continue;
		}
		const mr = median(ratio);
		worst.set(st.name, Math.min(worst.get(st.name) ?? Infinity, mr));
		say(`| ${st.name} | ${f} | ${ms(median(p))} | ${ms(median(c))} | ${x(mr)} | ${x(Math.min(...ratio))}–${x(Math.max(...ratio))} | ${spread(p)} | ${spread(c)} |`);
	}
}
say();
for (const f of files) {
	const ck = pi[0].files[f].check;
	if (ck) {
		say(`pi's plan on ${f}: first kept entry ${ck.firstKeptEntryIndex}, ${ck.messagesToSummarize} messages to summarize, split turn ${ck.isSplitTurn} (${ck.turnPrefixMessages} prefix), tokensBefore ${ck.tokensBefore}.`);
	}
}

say();
say("| append one message + check, in memory | median (µs) | range (µs) | spread |");
say("|---|---:|---:|---:|");
const sizes = ["1000", "10000", "100000"];
const appendMedian = new Map();
for (const n of sizes) {
	const v = go.map((g) => g.get(`BenchmarkAppendAndCheck/${n}`)).filter((y) => y !== undefined);
	if (v.length === 0) {
		say(`| ${Number(n).toLocaleString("en-US")} messages | missing | | |`);
		continue;
	}
	appendMedian.set(n, median(v));
	say(`| ${Number(n).toLocaleString("en-US")} messages | ${(median(v) / 1e3).toFixed(2)} | ${(Math.min(...v) / 1e3).toFixed(2)}–${(Math.max(...v) / 1e3).toFixed(2)} | ${spread(v)} |`);
}
const change = appendMedian.has("1000") && appendMedian.has("100000") ? (appendMedian.get("100000") / appendMedian.get("1000") - 1) * 100 : NaN;
say();
say(`append-and-check from 1,000 to 100,000 messages: ${change >= 0 ? "+" : ""}${change.toFixed(1)} %`);

say();
say("| goal (issue 13) | measured (worst file, median ratio) | met |");
say("|---|---:|---|");
for (const st of steps) {
	const w = worst.get(st.name);
	say(`| ${st.name} ≥ ${st.goal}x pi | ${x(w)} | ${w >= st.goal ? "yes" : "no"} |`);
}
say(`| append-and-check flat, within 10 % from 1k to 100k | ${change >= 0 ? "+" : ""}${change.toFixed(1)} % | ${Math.abs(change) <= 10 ? "yes" : "no"} |`);
process.stdout.write(lines.join("\n") + "\n");
