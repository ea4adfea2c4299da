'use strict';
// What the independent generator's two kinds of process share: the ws library, the benchmark
// message's header, the latency histogram, relay tokens and access codes, and /proc readings.

const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const path = require('path');

/** Bytes at the start of every benchmark message: send time (ns, CLOCK_MONOTONIC), sequence number, writer id. */
const HEAD = 20;

/** The key a node without RELAY_SECRET checks tokens against (BenchCommand.DEV_SECRET). */
const DEV_SECRET = 'relay-development-secret-do-not-use-in-production';

/**
 * The ws library, its version and what masks and unmasks its frames: from Node's own module paths
 * (this directory's node_modules after `npm ci`, or Debian's nodejs, which searches
 * /usr/share/nodejs), else from where Debian's node-ws puts it, for a Node.js that does not search
 * there (NodeSource's). ws masks in native code when it finds bufferutil beside it (as ws's
 * README recommends for speed), in JavaScript otherwise.
 */
function loadWs() {
  for (const id of ['ws', '/usr/share/nodejs/ws']) {
    try {
      const main = require.resolve(id);
      const pkg = JSON.parse(fs.readFileSync(path.join(path.dirname(main), 'package.json'), 'utf8'));
      return { WebSocket: require(main), version: pkg.version, masking: masking(path.dirname(main)) };
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  throw new Error('the ws library is missing: apt-get install node-ws (Debian, into /usr/share/nodejs), or npm install ws');
}

/** How ws at `wsDir` masks: "bufferutil <version>" where it loads bufferutil's native binary, else why JavaScript does it. */
function masking(wsDir) {
  if (process.env.WS_NO_BUFFER_UTIL) return 'in JavaScript (WS_NO_BUFFER_UTIL)';
  let main;
  try {
    main = require.resolve('bufferutil', { paths: [wsDir] });
  } catch (e) {
    return 'in JavaScript (no bufferutil)';
  }
  const dir = path.dirname(main);
  // bufferutil falls back to its own JavaScript when no binary loads for this platform
  if (require(main) === require(path.join(dir, 'fallback.js'))) return 'in JavaScript (bufferutil without its native binary)';
  return `bufferutil ${JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version}`;
}

// A log-linear histogram of nanosecond latencies with the buckets of the Java generator's
// LatencyHistogram (64 sub-buckets per power of two, about 1.5 % resolution).
const SUB_BITS = 6;
const SUB = 1 << SUB_BITS;
const LINEAR = 2 * SUB;
const BUCKETS = LINEAR + 58 * SUB;

class Histogram {
  constructor() {
    this.counts = new Float64Array(BUCKETS);
    this.total = 0;
    this.max = 0;
  }

  record(nanos) {
    const v = Math.max(0, Math.round(nanos));
    this.counts[bucket(v)]++;
    this.total++;
    if (v > this.max) this.max = v;
  }

  /** The histogram as a small JSON value (non-empty buckets only), to cross the IPC channel. */
  toWire() {
    const buckets = [];
    this.counts.forEach((c, i) => c > 0 && buckets.push([i, c]));
    return { buckets, total: this.total, max: this.max };
  }

  addWire(wire) {
    for (const [i, c] of wire.buckets) this.counts[i] += c;
    this.total += wire.total;
    this.max = Math.max(this.max, wire.max);
  }

  /** The value at quantile q (0..1) in nanoseconds, as the upper bound of its bucket. */
  quantile(q) {
    if (this.total === 0) return 0;
    const rank = Math.ceil(q * this.total);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i];
      if (seen >= rank && this.counts[i] > 0) return Math.min(this.max, upper(i));
    }
    return this.max;
  }
}

function bucket(v) {
  if (v < LINEAR) return v;
  let msb = Math.floor(Math.log2(v));
  if (2 ** msb > v) msb--;
  else if (2 ** (msb + 1) <= v) msb++;
  const shift = msb - SUB_BITS;
  return LINEAR + (shift - 1) * SUB + (Math.floor(v / 2 ** shift) - SUB);
}

function upper(index) {
  if (index < LINEAR) return index;
  const shift = Math.floor((index - LINEAR) / SUB) + 1;
  const mantissa = ((index - LINEAR) % SUB) + SUB;
  return (mantissa + 1) * 2 ** shift - 1;
}

const base64url = (data) => Buffer.from(data).toString('base64url');

/** A relay session token (HS256) for topic with the given scopes, valid for two hours. */
function token(secret, audience, topic, scopes) {
  const now = Math.floor(Date.now() / 1000);
  const claims = { aud: audience, iat: now, nbf: now, exp: now + 7200, prefix: 'session', topic, scopes, booking_id: 'bench' };
  const unsigned = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' })) + '.' + base64url(JSON.stringify(claims));
  return unsigned + '.' + crypto.createHmac('sha256', secret).update(unsigned).digest('base64url');
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** Asks the relay's access API for a one-time code for topic: the WebSocket URL it answers. */
function requestCode(access, topic, bearer) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      new URL('/session/' + topic, access),
      { method: 'POST', agent: keepAlive, headers: { Authorization: bearer, 'Content-Length': 0 }, timeout: 30000 },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => {
          let uri;
          try {
            uri = JSON.parse(body).uri;
          } catch (e) {
            uri = undefined;
          }
          // an error's body is a JSON error, never a code; a code is never printed
          if (response.statusCode === 200 && uri) resolve(uri);
          else reject(new Error(`access API answered ${response.statusCode}: ${response.statusCode === 200 ? 'no uri' : body}`));
        });
      });
    request.on('timeout', () => request.destroy(new Error('access API did not answer within 30 s')));
    request.on('error', reject);
    request.end();
  });
}

const TICKS_PER_SECOND = 100;

/** Two adjacent clock-tick fields of /proc/<pid>/stat added (11, 12: utime, stime; 13, 14: of reaped children); 0 if unreadable. */
function statTicks(pid, first) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[first]) + Number(f[first + 1]);
  } catch (e) {
    return 0;
  }
}

/** The CPU seconds of the server processes rootPids, their descendants and their reaped children (nginx's workers). */
function serverCpuSeconds(rootPids) {
  if (rootPids.length === 0) return NaN;
  const parent = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch (e) {
      // gone since the listing
    }
  }
  const family = new Set(rootPids);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parent) {
      if (family.has(ppid) && !family.has(pid)) {
        family.add(pid);
        grew = true;
      }
    }
  }
  let ticks = 0;
  for (const pid of family) ticks += statTicks(pid, 11);
  for (const pid of rootPids) ticks += statTicks(pid, 13);
  return ticks / TICKS_PER_SECOND;
}

module.exports = { HEAD, DEV_SECRET, loadWs, Histogram, token, requestCode, serverCpuSeconds };
