'use strict';
// relay-adapter.js: lets Autobahn|Testsuite fuzzingclient test a relay whose every
// WebSocket URL needs a one-time code.
//
// For each TCP connection accepted on --port (default 127.0.0.1:9002):
//   1. pick a fresh topic  ab-<counter>-<random>;
//   2. mint an HS256 token for it and POST <access>/session/<topic> for a one-time URI;
//      connect an ECHO participant (Node `ws`) with it: every message it receives it
//      sends back with the same type (text as text, binary as binary), maxPayload 64 MiB,
//      no permessage-deflate, ws's own validation only;
//   3. once the echo participant is open, get a second code and open a plain TCP
//      connection to the relay; rewrite only the request line of the fuzzer's first HTTP
//      request to  GET /session/<topic>?code=<code> HTTP/1.1  (all other bytes, including
//      anything after the headers in the same chunk, are forwarded unchanged);
//   4. pipe raw bytes both ways. 'end' on one side -> end() on the other (half-close is
//      kept: both sockets are allowHalfOpen). 'close' on one side -> destroy the other
//      (if the other still has queued bytes and the close was clean, it is ended and
//      destroyed once flushed, at most 5 s later, so a last close frame is not lost).
//      When both proxied sockets are closed, the echo participant is closed.
//
// Direct mode (--direct, or ADAPTER_DIRECT=1), for a relay without codes such as
// reference-relay.js: steps 2 and 3 fetch no codes and mint no tokens. The echo participant
// connects to  ws://<relay host>:<relay port>/session/<topic>  and the request line becomes
// GET /session/<topic> HTTP/1.1 ; everything else (waiting for the echo participant to be
// open, the raw TCP proxy, the close handling) is the same. --access/--audience/--secret
// are ignored there. In the default mode the adapter fetches codes as above.
//
// Options (flags or environment):
//   --port      ADAPTER_PORT     9002
//   --host      ADAPTER_HOST     127.0.0.1
//   --access    RELAY_ACCESS     http://127.0.0.1:3000   (access API base URL)
//   --relay     RELAY_TCP        127.0.0.1:3001          (where raw fuzzer bytes go)
//   --audience  RELAY_AUDIENCE   = --access              (token "aud")
//   --secret    RELAY_SECRET     relay-development-secret-do-not-use-in-production
//   --verbose   ADAPTER_VERBOSE  off (1 = log every connection)
//   --direct    ADAPTER_DIRECT   off (flag without a value; env 1 = on): no codes, see above
//   --tls       ADAPTER_TLS      off (flag without a value; env 1 = on): the relay's ports are
//               TLS (RELAY_TLS_CERT/KEY): the fuzzer's bytes go to the relay over TLS, the echo
//               participant connects with wss://, any certificate accepted (a test's own)
const net = require('net');
const tls = require('tls');
const http = require('http');
const https = require('https');
const crypto = require('crypto');
const WebSocket = require('ws');

function opt(name, env, dflt) {
  const i = process.argv.indexOf('--' + name);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  if (process.env[env] !== undefined && process.env[env] !== '') return process.env[env];
  return dflt;
}
const PORT = Number(opt('port', 'ADAPTER_PORT', '9002'));
const HOST = opt('host', 'ADAPTER_HOST', '127.0.0.1');
const ACCESS = opt('access', 'RELAY_ACCESS', 'http://127.0.0.1:3000').replace(/\/+$/, '');
const RELAY_TCP = opt('relay', 'RELAY_TCP', '127.0.0.1:3001');
const AUDIENCE = opt('audience', 'RELAY_AUDIENCE', ACCESS);
const SECRET = opt('secret', 'RELAY_SECRET', 'relay-development-secret-do-not-use-in-production');
const VERBOSE = !!Number(opt('verbose', 'ADAPTER_VERBOSE', '0'));
const DIRECT = process.argv.includes('--direct') || process.env.ADAPTER_DIRECT === '1';
const TLS = process.argv.includes('--tls') || process.env.ADAPTER_TLS === '1';
const MAX_PAYLOAD = 64 * 1024 * 1024;
const [RELAY_HOST, RELAY_PORT] = (() => {
  const m = /^(.*):(\d+)$/.exec(RELAY_TCP);
  if (!m) throw new Error('--relay must be host:port, got ' + RELAY_TCP);
  return [m[1], Number(m[2])];
})();

const log = (...a) => console.log(new Date().toISOString(), ...a);
const vlog = (...a) => { if (VERBOSE) log(...a); };

const b64url = (b) => Buffer.from(b).toString('base64').replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
function token(topic) {
  const now = Math.floor(Date.now() / 1000);
  const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const claims = b64url(JSON.stringify({
    topic, prefix: 'session', scopes: ['read', 'write'],
    booking_id: 'b-autobahn-' + crypto.randomBytes(4).toString('hex'),
    aud: AUDIENCE, exp: now + 3600, nbf: now - 5, iat: now - 5,
  }));
  const sig = b64url(crypto.createHmac('sha256', SECRET).update(header + '.' + claims).digest());
  return `${header}.${claims}.${sig}`;
}

// POST <access>/session/<topic> -> the one-time ws URI
function getUri(topic) {
  return new Promise((resolve, reject) => {
    const url = new URL(`${ACCESS}/session/${topic}`);
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, { method: 'POST', rejectUnauthorized: false, headers: { Authorization: token(topic), 'Content-Length': 0 } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`access API ${res.statusCode}: ${body.trim()}`));
        try { resolve(JSON.parse(body).uri); } catch (e) { reject(new Error('bad access API body: ' + body)); }
      });
    });
    req.setTimeout(10000, () => req.destroy(new Error('access API timeout')));
    req.on('error', reject);
    req.end();
  });
}

function openEcho(uri, id) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(uri, { maxPayload: MAX_PAYLOAD, perMessageDeflate: false, rejectUnauthorized: false });
    let opened = false;
    ws.on('open', () => { opened = true; resolve(ws); });
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    // errors/closes the adapter did not ask for are always logged: they show what the
    // relay passed on to the other participant (e.g. invalid UTF-8 makes ws close 1007)
    ws.on('error', (e) => { if (!opened) reject(e); else log(`[${id}] echo participant error: ${e.message}`); });
    ws.on('close', (code, reason) => {
      if (ws.adapterClosing) vlog(`[${id}] echo closed ${code} ${reason}`);
      else log(`[${id}] echo participant closed by the relay side: ${code} ${reason}`);
    });
    ws.on('unexpected-response', (req, res) => reject(new Error(`echo upgrade refused: HTTP ${res.statusCode}`)));
  });
}

let counter = 0;
const stats = { connections: 0, failedSetup: 0 };

const server = net.createServer({ allowHalfOpen: true }, (client) => {
  const id = ++counter;
  stats.connections++;
  const topic = `ab-${id}-${crypto.randomBytes(4).toString('hex')}`;
  const pending = [];
  let clientEnded = false;
  let clientClosed = false;
  let echo = null;
  let upstream = null;

  const onEarlyData = (d) => pending.push(d);
  const onEarlyEnd = () => { clientEnded = true; };
  const onEarlyClose = () => { clientClosed = true; cleanupEcho(); };
  client.on('data', onEarlyData);
  client.on('end', onEarlyEnd);
  client.on('close', onEarlyClose);
  client.on('error', (e) => vlog(`[${id}] client error: ${e.message}`));

  function cleanupEcho() {
    if (!echo) return;
    const ws = echo;
    echo = null;
    ws.adapterClosing = true;
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) {
      try { ws.close(1000); } catch (e) { ws.terminate(); }
      setTimeout(() => ws.terminate(), 2000).unref();
    }
  }

  (async () => {
    let target;
    if (DIRECT) {
      target = `/session/${topic}`;
      echo = await openEcho(`ws://${RELAY_HOST}:${RELAY_PORT}${target}`, id);
      if (clientClosed) { cleanupEcho(); return; }
    } else {
      echo = await openEcho(await getUri(topic), id);
      const uri = await getUri(topic);
      if (clientClosed) { cleanupEcho(); return; }
      const u = new URL(uri);
      target = `${u.pathname}${u.search}`;
    }
    vlog(`[${id}] topic ${topic}: echo open, proxying to ${RELAY_HOST}:${RELAY_PORT}${target}`);

    // wait for the whole request line of the fuzzer's first request
    const head = await new Promise((resolve, reject) => {
      const check = () => {
        const buf = Buffer.concat(pending);
        const eol = buf.indexOf('\r\n');
        if (eol >= 0) return resolve(buf);
        if (clientEnded || clientClosed) return reject(new Error('client closed before sending a request line'));
        client.once('data', () => setImmediate(check));
      };
      check();
    });
    client.removeListener('data', onEarlyData);
    client.removeListener('end', onEarlyEnd);
    client.removeListener('close', onEarlyClose);
    client.pause();

    const eol = head.indexOf('\r\n');
    const line = head.slice(0, eol).toString('latin1');
    const m = /^(\S+) (\S+) (HTTP\/\d\.\d)$/.exec(line);
    if (!m) throw new Error('unexpected request line: ' + JSON.stringify(line));
    const rewritten = Buffer.concat([Buffer.from(`${m[1]} ${target} ${m[3]}`, 'latin1'), head.slice(eol)]);

    upstream = TLS
      ? tls.connect({ host: RELAY_HOST, port: RELAY_PORT, allowHalfOpen: true, rejectUnauthorized: false })
      : net.connect({ host: RELAY_HOST, port: RELAY_PORT, allowHalfOpen: true });
    upstream.on('error', (e) => vlog(`[${id}] upstream error: ${e.message}`));
    await new Promise((resolve, reject) => {
      upstream.once(TLS ? 'secureConnect' : 'connect', resolve);
      upstream.once('error', reject);
    });
    if (client.destroyed) throw new Error('client closed while connecting to the relay');
    upstream.setNoDelay(true);
    client.setNoDelay(true);

    upstream.write(rewritten);
    // raw pipes; pipe() ends the destination on the source's 'end' (half-close)
    client.pipe(upstream);
    upstream.pipe(client);
    if (clientEnded) upstream.end();

    let closed = 0;
    const onClose = (self, other, name) => (hadError) => {
      vlog(`[${id}] ${name} closed${hadError ? ' with error' : ''}`);
      if (!other.destroyed) {
        if (hadError || other.writableLength === 0) other.destroy();
        else {
          other.end();
          const t = setTimeout(() => other.destroy(), 5000);
          t.unref();
          other.once('finish', () => { clearTimeout(t); other.destroy(); });
        }
      }
      if (++closed === 2) cleanupEcho();
    };
    client.on('close', onClose(client, upstream, 'client'));
    upstream.on('close', onClose(upstream, client, 'upstream'));
    client.resume();
  })().catch((e) => {
    stats.failedSetup++;
    log(`[${id}] topic ${topic}: setup failed: ${e.message}`);
    client.destroy();
    if (upstream) upstream.destroy();
    cleanupEcho();
  });
});

server.on('error', (e) => { log('adapter server error: ' + e.message); process.exit(1); });
server.listen(PORT, HOST, () => {
  if (DIRECT) log(`LISTENING ` + `relay-adapter listening on ${HOST}:${PORT}; DIRECT mode (no codes), relay ${RELAY_HOST}:${RELAY_PORT}`);
  else log(`LISTENING ` + `relay-adapter listening on ${HOST}:${PORT}; access API ${ACCESS}, relay ${RELAY_HOST}:${RELAY_PORT}, aud ${AUDIENCE}`);
});
const stop = () => {
  log(`relay-adapter stopping: ${stats.connections} connections, ${stats.failedSetup} failed setups`);
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
