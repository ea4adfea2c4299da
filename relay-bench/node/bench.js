#!/usr/bin/env node
'use strict';
// The independent load generator: workloads W1-W4 of docs/benchmarks.md against a relay node
// (through its access API: a token, a POST for a one-time code, a connect with the code) or
// nginx+nchan, with the ws library in two processes (worker.js): process 0 holds the writers,
// process 1 the readers (W2: participant 0 of every topic in process 0, participant 1 in 1;
// W3's reader tells its writer its count over a loopback socket between the two).
// Latency is from the writer's ws.send() to the reader's 'message' event, both stamped with
// process.hrtime.bigint() (CLOCK_MONOTONIC, shared by the machine's processes). Prints the
// result as JSON and appends it as one line to --json.
//
//   node relay-bench/node/bench.js --target relay --workload W1 --access http://127.0.0.1:3000
//   node relay-bench/node/bench.js --target nchan --label nchan-1w --workload W3 --nchan http://127.0.0.1:8090
//   node relay-bench/node/bench.js --check     (prints the versions of Node.js and ws and what masks, or why ws is missing)

const { fork } = require('child_process');
const fs = require('fs');
const path = require('path');
const { DEV_SECRET, loadWs, Histogram, serverCpuSeconds } = require('./lib');

const WORKLOADS = {
  W1: { topics: 50, writers: 1, readers: 4, participants: 0, size: 20 * 1024, rate: 25, steps: [] },
  W2: { topics: 200, writers: 0, readers: 0, participants: 2, size: 100, rate: 10, steps: [] },
  W3: { topics: 1, writers: 1, readers: 1, participants: 0, size: 64 * 1024, rate: 0, steps: [] },
  W4: { topics: 50, writers: 1, readers: 4, participants: 0, size: 20 * 1024, rate: 25, steps: [25, 50, 100, 200, 300, 400] },
};
const OPTIONS = {
  target: 'relay', label: '', workload: 'W1', duration: '10', warmup: '3', 'step-seconds': '5', rates: '', topics: '',
  window: '32', access: 'http://127.0.0.1:3000', nchan: 'http://127.0.0.1:8090', secret: process.env.RELAY_SECRET || '',
  audience: process.env.RELAY_AUDIENCE || 'http://127.0.0.1:3000', 'server-pid': '', json: '', 'p99-limit-ms': '100', 'min-delivery': '0.95',
};
const OPEN_SECONDS = 120;
const ANSWER_SECONDS = 30;
const DRAIN_MILLIS = 3000;

function options(args) {
  const o = { ...OPTIONS };
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i].replace(/^--/, '');
    if (!(name in OPTIONS) || args[i + 1] === undefined) {
      throw new Error(`unknown option or missing value: ${args[i]} (options: --${Object.keys(OPTIONS).join(' --')}, or --check)`);
    }
    o[name] = args[i + 1];
  }
  if (!['relay', 'nchan'].includes(o.target)) throw new Error('--target must be relay or nchan');
  if (!WORKLOADS[o.workload.toUpperCase()]) throw new Error(`unknown workload ${o.workload} (the Node generator runs W1 to W4)`);
  return o;
}

/** One generator process and its IPC channel: ask() sends a command and awaits its reply, within a deadline. */
class Worker {
  constructor(n) {
    this.n = n;
    this.pending = new Map();
    this.nextId = 0;
    this.child = fork(path.join(__dirname, 'worker.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.on('message', (m) => this.pending.get(m.id)?.(m));
    this.child.once('exit', (code, signal) => {
      for (const answer of this.pending.values()) answer({ ok: false, error: `generator process ${n} exited (${code ?? signal})` });
    });
  }

  ask(cmd, fields = {}, seconds = ANSWER_SECONDS) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => answer({ ok: false, error: `generator process ${this.n} did not answer '${cmd}' within ${seconds} s` }), seconds * 1000);
      const answer = (m) => {
        clearTimeout(timer);
        this.pending.delete(id);
        m.ok ? resolve(m) : reject(new Error(m.error));
      };
      this.pending.set(id, answer);
      this.child.send({ id, cmd, ...fields });
    });
  }

  /** Closes its connections and waits for it to exit; kills it (by its pid) if it has not within 10 s. */
  async close() {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.send({ cmd: 'close' });
    let timer;
    const exited = await Promise.race([this.exited.then(() => true), new Promise((resolve) => (timer = setTimeout(resolve, 10000, false)))]);
    clearTimeout(timer);
    if (!exited) this.child.kill('SIGKILL');
  }
}

/** The connections of every topic, split between the two processes (see the top of this file). */
function plan(w, size) {
  const run = Date.now().toString(36);
  const conns = [[], []];
  for (let t = 0; t < w.topics; t++) {
    const topic = `bench-node-${run}-${t}`;
    if (w.participants > 0) {
      for (let p = 0; p < 2; p++) conns[p].push({ topic, role: 'participant', index: p, writerId: t * 16 + p, expectWriter: t * 16 + (1 - p), size });
      continue;
    }
    for (let i = 0; i < w.readers; i++) conns[1].push({ topic, role: 'reader', index: i, expectWriter: t * 16 });
    conns[0].push({ topic, role: 'writer', index: 0, writerId: t * 16, size });
  }
  return conns;
}

/** Node.js, ws and ws's masking, as a run records them. */
function describe(ws) {
  return `node ${process.version}, ws ${ws.version}, masking ${ws.masking}`;
}

async function main() {
  if (process.argv[2] === '--check') {
    console.log(describe(loadWs()));
    return;
  }
  const o = options(process.argv.slice(2));
  const w = { name: o.workload.toUpperCase(), ...WORKLOADS[o.workload.toUpperCase()] };
  if (o.topics) w.topics = Number(o.topics);
  if (o.rates) w.steps = o.rates.split(',').map(Number);
  const fanOut = w.participants > 0 ? w.participants - 1 : w.readers;
  const endpoint = { target: o.target, access: o.access, nchan: o.nchan, secret: o.secret || DEV_SECRET, audience: o.audience };
  const serverPids = o['server-pid'] ? o['server-pid'].split(',').map(Number) : [];
  const procs = [new Worker(0), new Worker(1)];
  const both = (cmd, fields, seconds) => Promise.all(procs.map((p) => p.ask(cmd, fields, seconds)));

  /** One measured window: the two processes' figures merged, with the server's and the generator's CPU over it. */
  async function measure(seconds, ratePerTopic) {
    const [a0, b0] = (await both('swap')).map((x) => x.cpu);
    const self0 = process.cpuUsage();
    const server0 = serverCpuSeconds(serverPids);
    const t0 = process.hrtime.bigint();
    await sleep(seconds);
    const answers = await both('swap');
    const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
    const latency = new Histogram();
    const s = { delivered: 0, bytes: 0, lost: 0, reordered: 0, offered: 0, skipped: 0 };
    for (const { stats } of answers) {
      latency.addWire(stats.latency);
      for (const k of Object.keys(s)) s[k] += stats[k];
    }
    const cpuMicros = (u, u0) => u.user - u0.user + u.system - u0.system;
    const generatorCpu = (cpuMicros(answers[0].cpu, a0) + cpuMicros(answers[1].cpu, b0) + cpuMicros(process.cpuUsage(), self0)) / 1e6;
    const expected = s.offered * fanOut;
    const delivery = expected === 0 ? 0 : s.delivered / expected;
    const ms = (q) => round(latency.quantile(q) / 1e6, 3);
    return {
      seconds: round(elapsed, 2),
      intendedMsgPerS: round(ratePerTopic * w.topics, 1),
      offeredMsgPerS: round(s.offered / elapsed, 1),
      skippedByGenerator: s.skipped,
      deliveredMsgPerS: round(s.delivered / elapsed, 1),
      deliveredMBps: round(s.bytes / elapsed / 1e6, 2),
      deliveryRatio: round(delivery, 4),
      p50Ms: ms(0.5), p90Ms: ms(0.9), p99Ms: ms(0.99), p999Ms: ms(0.999), maxMs: round(latency.max / 1e6, 3),
      lostInWindow: s.lost,
      reorderedInWindow: s.reordered,
      serverCpuPct: serverPids.length ? round((100 * (serverCpuSeconds(serverPids) - server0)) / elapsed, 1) : null,
      generatorCpuPct: round((100 * generatorCpu) / elapsed, 1),
      // as the Java generator's rule (TrafficRun.passes): a step passes at its rate only if its
      // writers offered at least 95 % of it, so writers a server closed do not pass for the rate
      pass: latency.quantile(0.99) <= Number(o['p99-limit-ms']) * 1e6 && delivery >= Number(o['min-delivery']) &&
        s.offered >= 0.95 * ratePerTopic * w.topics * elapsed,
    };
  }

  try {
    const result = { target: o.target, label: o.label || o.target, workload: w.name, transport: 'ws', generator: 'node-ws' };
    result.generatorVersions = `${describe(loadWs())}, 2 processes`;
    const conns = plan(w, w.size);
    const t0 = process.hrtime.bigint();
    // readers before writers, so that every message sent has its readers; chat's participants at once
    const opened = w.participants > 0
      ? await Promise.all(procs.map((p, i) => p.ask('open', { conns: conns[i], endpoint }, OPEN_SECONDS)))
      : [await procs[1].ask('open', { conns: conns[1], endpoint }, OPEN_SECONDS), await procs[0].ask('open', { conns: conns[0], endpoint }, OPEN_SECONDS)];
    const connectSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const connectNanos = opened.flatMap((x) => x.connectNanos).sort((a, b) => a - b);
    Object.assign(result, {
      connections: connectNanos.length,
      connectSeconds: round(connectSeconds, 2),
      connectP50Ms: round(connectNanos[Math.floor(connectNanos.length / 2)] / 1e6, 3),
      connectP99Ms: round(connectNanos[Math.min(connectNanos.length - 1, Math.floor(connectNanos.length * 0.99))] / 1e6, 3),
    });
    const perWriter = (rate) => (w.participants > 0 ? rate / w.participants : rate);
    if (w.rate === 0) {
      // the closed loop's credit: the readers' process tells the writers' its counts over loopback
      const { port } = await procs[0].ask('creditServer');
      await procs[1].ask('creditClient', { port });
    }
    if (w.steps.length === 0) {
      await both('start', { ratePerWriter: perWriter(w.rate), windowSize: w.rate === 0 ? Number(o.window) : 0 });
      await sleep(Number(o.warmup));
      Object.assign(result, await measure(Number(o.duration), w.rate));
    } else {
      // the whole warm-up at the first step's rate, then 1 s before each further step (as the Java generator)
      const steps = [];
      let best = 0;
      let bestMBps = 0;
      for (const [i, rate] of w.steps.entries()) {
        await (i === 0 ? both('start', { ratePerWriter: rate, windowSize: 0 }) : both('rate', { ratePerWriter: rate }));
        await sleep(i === 0 ? Number(o.warmup) : Math.min(Number(o.warmup), 1));
        const step = { rate, ...(await measure(Number(o['step-seconds']), rate)) };
        steps.push(step);
        console.error(`bench-node: ${w.name} ${rate}/s per topic: delivered ${step.deliveredMBps} MB/s (${step.deliveryRatio}), p99 ${step.p99Ms} ms`);
        if (!step.pass) break;
        best = rate;
        bestMBps = Math.max(bestMBps, step.deliveredMBps);
      }
      Object.assign(result, { steps, highestPassingRate: best, highestPassingMBps: bestMBps });
    }
    Object.assign(result, await finish(procs, both));
    console.log(JSON.stringify(result, null, 2));
    if (o.json) fs.appendFileSync(o.json, JSON.stringify(result) + '\n');
  } finally {
    await Promise.all(procs.map((p) => p.close()));
  }
}

/** Stops the writers, waits until the readers stop receiving (at most 3 s), and counts what was lost over the whole run. */
async function finish(procs, both) {
  const sent = new Map((await both('stop')).flatMap((x) => x.sent));
  const deadline = Date.now() + DRAIN_MILLIS;
  for (let last = -1; Date.now() < deadline; await sleep(0.2)) {
    const now = (await both('received')).reduce((n, x) => n + x.received, 0);
    if (now === last) break;
    last = now;
  }
  const finals = await both('final');
  const readers = finals.flatMap((x) => x.readers);
  let lost = 0;
  let reordered = 0;
  let maxLost = 0;
  for (const r of readers) {
    const l = r.lost + Math.max(0, (sent.get(r.expectWriter) ?? 0) - 1 - r.maxSeq);
    lost += l;
    reordered += r.reordered;
    maxLost = Math.max(maxLost, l);
  }
  const open = finals.reduce((n, x) => n + x.open, 0);
  return {
    readers: readers.length,
    readersReceiving: readers.filter((r) => r.received > 0).length,
    lostTotal: lost,
    lostMaxPerReader: maxLost,
    reorderedTotal: reordered,
    closedConnections: finals.reduce((n, x) => n + x.closedByServer, 0),
    openConnections: open,
  };
}

const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const round = (v, digits) => Math.round(v * 10 ** digits) / 10 ** digits;

main().catch((e) => {
  console.error(`bench-node: ${e.message}`);
  process.exitCode = 1;
});
