// pi.mjs times pi's own session and compaction functions, imported from
// the published @mariozechner/pi-coding-agent package installed beside this
// file (package-lock.json pins it), on the session files given as
// arguments. scripts/bench-vs-pi.sh runs it in rounds interleaved with
// compact's Go benchmarks on the same files.
//
//   node --expose-gc pi.mjs [--warmup N] [--calls N] [--plan-calls N] FILE...
//
// Steps, each timed with process.hrtime.bigint() around the calls only:
//
//   parse  the file's text already in memory (a string, as pi reads it):
//          parseSessionEntries + migrateSessionEntries.
//   load   readFileSync(path, "utf8") + parseSessionEntries +
//          migrateSessionEntries + the id index and leaf SessionManager
//          builds + buildSessionContext of the leaf: what opening a
//          session costs pi before it can send the context.
//   plan   prepareCompaction(branch, DEFAULT_COMPACTION_SETTINGS) on a
//          session loaded just before, untimed (so every timed plan is
//          the first on its session; pi caches no estimates anyway). The
//          branch (root to leaf, SessionManager.getBranch) is built
//          untimed too, and when node runs with --expose-gc the garbage
//          of the load is collected before the timer starts (compact's
//          BenchmarkPlanFirst does the same).
//
// Each step runs --warmup untimed calls, then the timed calls. It prints
// one JSON object: for each file and step the number of calls and the
// mean, median, min and max in nanoseconds, plus a check of the plan (the
// first kept entry's index, messages to summarize, split turn,
// tokensBefore) showing the functions ran on real data, and the number of
// loads repeated because pi's migration drew the same id twice.

import { readFileSync } from "node:fs";
import { basename } from "node:path";

const core = new URL("./node_modules/@mariozechner/pi-coding-agent/dist/core/", import.meta.url);
const sm = await import(new URL("session-manager.js", core));
const cp = await import(new URL("compaction/compaction.js", core));
const pkg = JSON.parse(readFileSync(new URL("./node_modules/@mariozechner/pi-coding-agent/package.json", import.meta.url), "utf8"));

function usage(msg) {
	process.stderr.write(`pi.mjs: ${msg}\nusage: node pi.mjs [--warmup N] [--calls N] [--plan-calls N] FILE...\n`);
	process.exit(2);
}

const opts = { warmup: 20, calls: 200, planCalls: 100 };
const files = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
	const a = argv[i];
	const flag = { "--warmup": "warmup", "--calls": "calls", "--plan-calls": "planCalls" }[a];
	if (flag) {
		const n = Number(argv[++i]);
		if (!Number.isInteger(n) || n < (flag === "warmup" ? 0 : 1)) usage(`${a} wants a positive integer, got ${argv[i]}`);
		opts[flag] = n;
	} else if (a.startsWith("--")) {
		usage(`unknown flag ${a}`);
	} else {
		files.push(a);
	}
}
if (files.length === 0) usage("no session file given");

// Collision is thrown when migrating a version 1 session gave two entries
// the same id: pi's v1 to v2 migration draws 8-hex ids at random without
// recording the ones it drew, so about one load in 8,000 of a 1,000-entry
// file collides, and the parent chain then loops forever. The call is
// repeated and the collision counted.
class Collision extends Error {}

// load does what SessionManager.setSessionFile does for an existing file,
// minus rewriting it after a migration: read, parse, migrate, index.
function load(path) {
	const entries = sm.parseSessionEntries(readFileSync(path, "utf8"));
	sm.migrateSessionEntries(entries);
	const byId = new Map();
	let leafId = null;
	for (const e of entries) {
		if (e.type === "session") continue;
		if (byId.has(e.id)) throw new Collision(e.id);
		byId.set(e.id, e);
		leafId = e.id;
	}
	return { entries, byId, leafId };
}

let collisions = 0;

// retry calls fn until it completes without a Collision.
function retry(fn) {
	for (;;) {
		try {
			return fn();
		} catch (err) {
			if (!(err instanceof Collision)) throw err;
			collisions++;
		}
	}
}

// branch is SessionManager.getBranch: the entries from the root to the leaf.
function branch(s) {
	const path = [];
	let cur = s.leafId ? s.byId.get(s.leafId) : undefined;
	while (cur) {
		path.push(cur);
		cur = cur.parentId ? s.byId.get(cur.parentId) : undefined;
	}
	return path.reverse();
}

// time runs setup (untimed) and fn(setup's result) warmup + calls times,
// timing only fn, and returns the statistics of the timed calls.
function time(calls, setup, fn) {
	let sink = 0;
	for (let i = 0; i < opts.warmup; i++) sink += touch(retry(() => fn(retry(setup))));
	const ns = new Array(calls);
	for (let i = 0; i < calls; ) {
		const input = retry(setup);
		const t0 = process.hrtime.bigint();
		let out;
		try {
			out = fn(input);
		} catch (err) {
			if (!(err instanceof Collision)) throw err;
			collisions++;
			continue; // not timed: the same call again
		}
		ns[i++] = Number(process.hrtime.bigint() - t0);
		sink += touch(out);
	}
	if (sink < 0) console.error(sink); // keeps the results alive
	ns.sort((a, b) => a - b);
	const mid = ns.length >> 1;
	const median = ns.length % 2 ? ns[mid] : (ns[mid - 1] + ns[mid]) / 2;
	return { calls, mean: ns.reduce((a, b) => a + b, 0) / calls, median, min: ns[0], max: ns[ns.length - 1] };
}

function touch(x) {
	if (Array.isArray(x)) return x.length;
	if (x && x.messages) return x.messages.length;
	if (x && x.messagesToSummarize) return x.messagesToSummarize.length;
	return 0;
}

const settings = cp.DEFAULT_COMPACTION_SETTINGS;
const out = {
	pi: pkg.version,
	node: process.version,
	settings: { keepRecentTokens: settings.keepRecentTokens, reserveTokens: settings.reserveTokens },
	warmup: opts.warmup,
	files: {},
};
for (const path of files) {
	const text = readFileSync(path, "utf8");
	const r = {};
	r.parse = time(opts.calls, () => text, (t) => {
		const entries = sm.parseSessionEntries(t);
		sm.migrateSessionEntries(entries);
		return entries;
	});
	r.load = time(opts.calls, () => path, (p) => {
		const s = load(p);
		return sm.buildSessionContext(s.entries, s.leafId, s.byId);
	});
	r.plan = time(opts.planCalls, () => {
		const b = branch(load(path));
		globalThis.gc?.();
		return b;
	}, (b) => cp.prepareCompaction(b, settings));

	const b = branch(retry(() => load(path)));
	const p = cp.prepareCompaction(b, settings);
	r.check = p && {
		firstKeptEntryIndex: b.findIndex((e) => e.id === p.firstKeptEntryId),
		messagesToSummarize: p.messagesToSummarize.length,
		isSplitTurn: p.isSplitTurn,
		turnPrefixMessages: p.turnPrefixMessages.length,
		tokensBefore: p.tokensBefore,
	};
	out.files[basename(path)] = r;
}
out.collisions = collisions;
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
