'use strict';
// One of the independent generator's two processes, forked by bench.js: opens its share of a
// workload's connections with ws, paces its writers or counts what its readers receive, and
// answers bench.js's commands over the IPC channel. A reply carries the command's id.

const net = require('net');
const { HEAD, loadWs, Histogram, token, requestCode } = require('./lib');

const { WebSocket } = loadWs();
/** A writer whose socket has this much unsent is not given more; the message counts as skipped (as in the Java generator). */
const MAX_BUFFERED = 8 * 1024 * 1024;
const CONNECT_CONCURRENCY = 64;
const TICK_MILLIS = 1;
/** Closed loop (W3): the reader process reports its count to the writer's every this many messages. */
const CREDIT_EVERY = 4;
/** A credit record on the loopback socket between the two processes: writer id, messages received (uint32 each). */
const CREDIT_BYTES = 8;

const writers = []; // { ws, writerId, seq, buf, phase, due, credit }
const readers = []; // { ws, expectWriter, expected, maxSeq, lost, reordered, received }
const sockets = [];
let stats = freshStats();
let rate = 0;
let stepStart = 0n;
let window = 0;
let ticker = null;
let closedByServer = 0;
let creditOut = null;

function freshStats() {
  return { latency: new Histogram(), delivered: 0, bytes: 0, lost: 0, reordered: 0, offered: 0, skipped: 0 };
}

const commands = {
  /** Opens conns (at most 64 at a time): the nanoseconds each took, from asking for its URL to its open event. */
  async open({ conns, endpoint }) {
    const connectNanos = [];
    let next = 0;
    const lane = async () => {
      while (next < conns.length) connectNanos.push(await openOne(conns[next++], endpoint));
    };
    await Promise.all(Array.from({ length: Math.min(CONNECT_CONCURRENCY, conns.length) }, lane));
    return { connectNanos };
  },

  /** Starts the writers: at ratePerWriter messages a second each, or (0) keeping windowSize messages in flight. */
  start({ ratePerWriter, windowSize }) {
    window = windowSize;
    setRate(ratePerWriter);
    if (rate > 0) {
      ticker = setInterval(tick, TICK_MILLIS);
    } else {
      writers.forEach(fill);
    }
    return {};
  },

  rate({ ratePerWriter }) {
    setRate(ratePerWriter);
    return {};
  },

  /** Closed loop, in the writers' process: listens on loopback for the readers' process's counts; answers the port. */
  async creditServer() {
    const server = net.createServer((socket) => {
      socket.setNoDelay(true);
      let pending = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        let at = 0;
        for (; at + CREDIT_BYTES <= pending.length; at += CREDIT_BYTES) credit(pending.readUInt32BE(at), pending.readUInt32BE(at + 4));
        pending = pending.subarray(at);
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    server.unref();
    return { port: server.address().port };
  },

  /** Closed loop, in the readers' process: connects to the writers' process for its counts. */
  async creditClient({ port }) {
    creditOut = net.connect(port, '127.0.0.1');
    creditOut.setNoDelay(true);
    await new Promise((resolve, reject) => creditOut.once('connect', resolve).once('error', reject));
    return {};
  },

  /** The finished window's figures and this process's CPU so far; a fresh window begins. */
  swap() {
    const done = stats;
    stats = freshStats();
    const { latency, ...counts } = done;
    return { stats: { ...counts, latency: latency.toWire() }, cpu: process.cpuUsage() };
  },

  stop() {
    clearInterval(ticker);
    ticker = null;
    window = 0;
    return { sent: writers.map((w) => [w.writerId, w.seq]) };
  },

  received() {
    return { received: readers.reduce((n, r) => n + r.received, 0) };
  },

  final() {
    const open = sockets.filter((ws) => ws.readyState === WebSocket.OPEN).length;
    return {
      readers: readers.map(({ expectWriter, lost, reordered, maxSeq, received }) => ({ expectWriter, lost, reordered, maxSeq, received })),
      open,
      closedByServer,
    };
  },

  /** Drops every connection and exits (no reply: bench.js waits for the exit). */
  close() {
    sockets.forEach((ws) => ws.terminate());
    creditOut?.destroy();
    process.exit(0);
  },
};

async function openOne(c, endpoint) {
  const t0 = process.hrtime.bigint();
  let url;
  if (endpoint.target === 'relay') {
    const scopes = { writer: ['write'], reader: ['read'], participant: ['read', 'write'] }[c.role];
    url = await requestCode(endpoint.access, c.topic, token(endpoint.secret, endpoint.audience, c.topic, scopes));
  } else {
    const base = new URL(endpoint.nchan);
    const where = { writer: `/pub/${c.topic}`, reader: `/sub/${c.topic}`, participant: `/chat/${c.topic}/${c.index}/${1 - c.index}` }[c.role];
    url = `ws://${base.host}${where}`;
  }
  // no compression offered: the servers relay the bytes given, as in the Java generator
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', (e) => reject(new Error(`a ${c.role} connection failed: ${e.message}`)));
    ws.once('unexpected-response', (req, res) => reject(new Error(`a ${c.role} upgrade was answered ${res.statusCode}`)));
  });
  const connectNanos = Number(process.hrtime.bigint() - t0);
  ws.on('error', () => {}); // a failed connection shows as closed and in the loss count
  ws.on('close', () => closedByServer++);
  sockets.push(ws);
  if (c.writerId !== undefined) {
    const buf = Buffer.alloc(Math.max(c.size, HEAD), 'abcdefghijklmnopqrstuvwxyz');
    buf.writeUInt32BE(c.writerId, 16);
    writers.push({ ws, writerId: c.writerId, seq: 0, buf, phase: 0, due: 0, credit: 0 });
  }
  if (c.expectWriter !== undefined) {
    const r = { ws, expectWriter: c.expectWriter, expected: 0, maxSeq: -1, lost: 0, reordered: 0, received: 0 };
    ws.on('message', (data) => onMessage(r, data));
    readers.push(r);
  }
  return connectNanos;
}

/** Every writer at rate messages a second from now, each starting at a random phase within its period. */
function setRate(ratePerWriter) {
  rate = ratePerWriter;
  stepStart = process.hrtime.bigint();
  for (const w of writers) {
    w.due = 0;
    w.phase = rate > 0 ? Math.random() * (1e9 / rate) : 0;
  }
}

function tick() {
  const now = process.hrtime.bigint();
  for (const w of writers) {
    const elapsed = Number(now - stepStart) - w.phase;
    if (elapsed < 0 || w.ws.readyState !== WebSocket.OPEN) continue;
    const target = Math.floor((elapsed * rate) / 1e9) + 1;
    while (w.due < target) {
      w.due++;
      if (w.ws.bufferedAmount >= MAX_BUFFERED) stats.skipped++;
      else send(w);
    }
  }
}

function credit(writerId, received) {
  const w = writers.find((x) => x.writerId === writerId);
  w.credit = Math.max(w.credit, received);
  fill(w);
}

/** Closed loop: sends while fewer than the window's messages are unaccounted for by the reader. */
function fill(w) {
  while (window > 0 && w.seq - w.credit < window && w.ws.readyState === WebSocket.OPEN) send(w);
}

function send(w) {
  w.buf.writeBigUInt64BE(BigInt(w.seq), 8);
  w.buf.writeBigUInt64BE(process.hrtime.bigint(), 0);
  // ws copies the buffer as it masks it, inside send(): the next message may rewrite it
  w.ws.send(w.buf, { binary: true });
  w.seq++;
  stats.offered++;
}

function onMessage(r, data) {
  const now = process.hrtime.bigint();
  r.received++;
  if (creditOut && window > 0 && r.received % CREDIT_EVERY === 0) {
    const record = Buffer.allocUnsafe(CREDIT_BYTES);
    record.writeUInt32BE(r.expectWriter, 0);
    record.writeUInt32BE(r.received % 2 ** 32, 4);
    creditOut.write(record);
  }
  if (data.length < HEAD || data.readUInt32BE(16) !== r.expectWriter) return;
  const seq = Number(data.readBigUInt64BE(8));
  if (seq > r.expected) {
    r.lost += seq - r.expected;
    stats.lost += seq - r.expected;
  } else if (seq < r.expected) {
    r.reordered++;
    stats.reordered++;
  }
  r.expected = Math.max(r.expected, seq + 1);
  r.maxSeq = Math.max(r.maxSeq, seq);
  stats.delivered++;
  stats.bytes += data.length;
  stats.latency.record(Number(now - data.readBigUInt64BE(0)));
}

process.on('message', async (m) => {
  try {
    const reply = await commands[m.cmd](m);
    if (m.id !== undefined) process.send({ id: m.id, ok: true, ...reply });
  } catch (e) {
    if (m.id !== undefined) process.send({ id: m.id, ok: false, error: e.message });
  }
});
// the parent gone (killed, or failed before closing us): nothing left to answer to
process.on('disconnect', () => process.exit(1));
