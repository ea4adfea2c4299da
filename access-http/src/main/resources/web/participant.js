// A participant page: POSTs the token for a one-time code, opens the WebSocket with the "null"
// subprotocol (as practable's browser clients do), shows frames, sends text, and reconnects with
// a new code when the server moves the topic (4001) or drains (1001). The token stays in memory.
(function () {
  "use strict";
  const RECONNECT = new Set([1001, 4001, 1006]);
  const STOP_REASONS = { 4000: "token expired: get a new token", 4003: "booking denied", 1009: "message too big" };
  let token = null;
  let socket = null;
  let wanted = false;
  let failures = 0;

  const $ = (id) => document.getElementById(id);
  $("access").value = window.location.origin;

  function log(text, cls) {
    const line = document.createElement("div");
    line.textContent = new Date().toLocaleTimeString() + "  " + text;
    if (cls) line.className = cls;
    $("log").prepend(line);
  }

  function state(text) {
    $("state").textContent = text;
  }

  function hex(bytes) {
    return Array.from(bytes.slice(0, 32)).map((b) => b.toString(16).padStart(2, "0")).join(" ") + (bytes.length > 32 ? " …" : "");
  }

  function show(frame) {
    const frames = $("frames");
    if (frames.querySelector(".empty")) frames.replaceChildren();
    const line = document.createElement("div");
    line.className = "frame mono";
    line.textContent = frame;
    frames.prepend(line);
  }

  async function fetchUri(access, topic) {
    const response = await fetch(access.replace(/\/+$/, "") + "/session/" + topic, {
      method: "POST",
      headers: { Authorization: token },
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(response.status + " " + (body.message || response.statusText));
    return body.uri;
  }

  async function connect() {
    const access = $("access").value.trim();
    const topic = $("topic").value.trim();
    state("getting a code");
    let uri;
    try {
      uri = await fetchUri(access, topic);
    } catch (e) {
      log("access refused: " + e.message, "bad");
      return retry();
    }
    state("connecting");
    socket = new WebSocket(uri, "null");
    socket.binaryType = "arraybuffer";
    socket.onopen = () => {
      failures = 0;
      state("connected");
      log("connected to " + uri.replace(/\?.*$/, ""), "ok");
    };
    socket.onmessage = (event) => {
      if (typeof event.data === "string") {
        show(event.data);
      } else {
        const bytes = new Uint8Array(event.data);
        show("binary " + bytes.length + " bytes: " + hex(bytes));
      }
    };
    socket.onclose = (event) => {
      socket = null;
      log("closed " + event.code + (event.reason ? " (" + event.reason + ")" : ""), RECONNECT.has(event.code) ? "warn" : "bad");
      if (!wanted) return state("disconnected");
      if (STOP_REASONS[event.code]) {
        wanted = false;
        return state("stopped: " + STOP_REASONS[event.code]);
      }
      if (event.code === 4001) {
        log("topic moved: reconnecting with a new code", "warn");
        return connect();
      }
      retry();
    };
  }

  function retry() {
    if (!wanted) return;
    failures += 1;
    const cap = Math.min(10000, 250 * 2 ** Math.min(failures, 6));
    const delay = Math.round(Math.random() * cap);
    state("reconnecting in " + delay + " ms");
    setTimeout(() => wanted && connect(), delay);
  }

  $("join").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    $("token").value = "";
    wanted = true;
    failures = 0;
    if (socket) socket.close(1000);
    connect();
  });

  $("disconnect").addEventListener("click", () => {
    wanted = false;
    if (socket) socket.close(1000, "bye");
  });

  $("send-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("message").value;
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(text);
      log("sent " + text.length + " characters");
      $("message").value = "";
    } else {
      log("not connected: nothing sent", "bad");
    }
  });
})();
