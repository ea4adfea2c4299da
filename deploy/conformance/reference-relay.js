'use strict';
// reference-relay.js: a minimal WebSocket relay on Node `ws`, the reference to compare the
// Java relay with under Autobahn|Testsuite (through relay-adapter.js --direct).
//
//   * URL path /session/{topic} picks the topic (a query string is ignored). No codes and no
//     auth. Any other path is refused with HTTP 404; plain HTTP requests get ws's 426.
//   * Every message a participant sends goes to every OTHER open participant of the same
//     topic, with the same type (text as text, binary as binary), in order. ws reassembles
//     fragmented messages, so a message goes out as one frame.
//   * A participant that leaves (close or error) is only removed from its topic; the others
//     stay connected. Pings are answered by ws itself (autoPong) and are not relayed.
//   * ws options: perMessageDeflate false, maxPayload 64 MiB, maxFragments 0 and
//     maxBufferedChunks 0 (ws >= 8.18 defaults to 16384 / 262144 and then
//     closes 9.3.1, 9.3.2, 9.4.1 and 9.4.2 with 1008). REF_WS_DEFAULTS=1 keeps those two
//     defaults. Everything else is ws's default (UTF-8 validation on, closeTimeout 30 s,
//     autoPong, maxPendingAutoPongs 60, ...).
//
// Usage: node reference-relay.js [port=9003] [host=127.0.0.1]
//   (or REF_PORT / REF_HOST; REF_VERBOSE=1 logs every join and leave)
const { WebSocketServer, WebSocket } = require('ws');

const port = Number(process.argv[2] || process.env.REF_PORT || 9003);
const host = process.argv[3] || process.env.REF_HOST || '127.0.0.1';
const VERBOSE = process.env.REF_VERBOSE === '1';
const MAX_PAYLOAD = 64 * 1024 * 1024;

const log = (...a) => console.log(new Date().toISOString(), ...a);
const vlog = (...a) => { if (VERBOSE) log(...a); };

const TOPIC_PATH = /^\/session\/([^/?#]+)(?:\?.*)?$/;
const topicOf = (url) => { const m = TOPIC_PATH.exec(url || ''); return m ? m[1] : null; };

const limits = process.env.REF_WS_DEFAULTS === '1' ? {} : { maxFragments: 0, maxBufferedChunks: 0 };
const wss = new WebSocketServer({
  host, port,
  maxPayload: MAX_PAYLOAD,
  perMessageDeflate: false,
  ...limits,
  verifyClient: (info, cb) => (topicOf(info.req.url) ? cb(true) : cb(false, 404, 'Not Found')),
});

/** topic -> Set<WebSocket> */
const topics = new Map();
let nextId = 0;
const stats = { connections: 0, messages: 0, deliveries: 0 };

wss.on('connection', (ws, req) => {
  const topic = topicOf(req.url);
  const id = ++nextId;
  stats.connections++;
  let members = topics.get(topic);
  if (!members) { members = new Set(); topics.set(topic, members); }
  members.add(ws);
  vlog(`[${id}] joined ${topic} (${members.size} participant(s))`);

  ws.on('message', (data, isBinary) => {
    stats.messages++;
    for (const other of members) {
      if (other !== ws && other.readyState === WebSocket.OPEN) {
        other.send(data, { binary: isBinary });
        stats.deliveries++;
      }
    }
  });
  const leave = () => {
    if (!members.delete(ws)) return;
    if (members.size === 0 && topics.get(topic) === members) topics.delete(topic);
  };
  // protocol errors: ws fails the connection with the right close code itself
  ws.on('error', (e) => { vlog(`[${id}] ${topic} error: ${e.message}`); leave(); });
  ws.on('close', (code, reason) => { vlog(`[${id}] left ${topic}: ${code} ${reason}`); leave(); });
});

wss.on('error', (e) => { log('reference-relay error: ' + e.message); process.exit(1); });
wss.on('listening', () => log(`LISTENING reference-relay on ws://${host}:${port}/session/{topic}`));

const stop = () => {
  log(`reference-relay stopping: ${stats.connections} connections, ${stats.messages} messages, ` +
      `${stats.deliveries} deliveries, ${topics.size} topic(s) still open`);
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
