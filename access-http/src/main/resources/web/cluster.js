// The live cluster page: asks for a relay:stats token (kept only in this closure, never in a
// URL or storage) and refreshes GET /cluster every few seconds.
(function () {
  "use strict";
  const REFRESH_MS = 3000;
  let token = null;
  let timer = null;

  const $ = (id) => document.getElementById(id);

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function row(cells) {
    const tr = document.createElement("tr");
    cells.forEach((c) => tr.appendChild(c instanceof Node ? wrapTd(c) : el("td", c)));
    return tr;
  }

  function wrapTd(node) {
    const td = document.createElement("td");
    td.appendChild(node);
    return td;
  }

  function num(value) {
    return el("td", value, "num");
  }

  function since(iso) {
    const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (seconds < 90) return seconds + " s";
    if (seconds < 5400) return Math.round(seconds / 60) + " min";
    return Math.round(seconds / 3600) + " h";
  }

  function rate(d) {
    return d.fps.toFixed(1) + "/s · " + Math.round(d.size) + " B";
  }

  function renderMembers(members) {
    const body = $("members").tBodies[0];
    body.replaceChildren();
    members.forEach((m) => {
      const status = el("span", m.status, m.status === "Up" ? "ok" : "warn");
      const reachable = el("span", m.reachable ? "yes" : "no", m.reachable ? "ok" : "bad");
      const roles = m.roles.filter((r) => !r.startsWith("dc-")).join(", ");
      body.appendChild(row([el("span", m.address, "mono"), status, roles, reachable, m.leader ? "leader" : "", m.app_version]));
    });
  }

  function renderNodes(members, connections) {
    const byNode = new Map();
    members.filter((m) => m.roles.includes("relay")).forEach((m) => byNode.set(m.address, []));
    connections.forEach((c) => {
      if (!byNode.has(c.node)) byNode.set(c.node, []);
      byNode.get(c.node).push(c);
    });
    const container = $("nodes");
    container.replaceChildren();
    byNode.forEach((conns, node) => {
      const topics = new Set(conns.map((c) => c.topic));
      const box = el("div", null, "node");
      box.dataset.node = node;
      box.appendChild(el("h3", node + " — " + topics.size + " topics, " + conns.length + " connections"));
      if (conns.length === 0) {
        box.appendChild(el("p", "no connections", "empty"));
      } else {
        const table = el("table");
        const head = row(["topic", "booking", "scopes", "remote address", "connected", "rx", "tx", "drops"]);
        head.querySelectorAll("td").forEach((td) => { const th = el("th", td.textContent); td.replaceWith(th); });
        table.appendChild(head);
        conns.sort((a, b) => a.topic.localeCompare(b.topic));
        conns.forEach((c) => {
          const tr = row([el("span", c.topic, "mono"), c.booking_id || "—", c.scopes.join(","), c.remote_addr, since(c.connected_at)]);
          tr.appendChild(num(rate(c.stats.rx)));
          tr.appendChild(num(rate(c.stats.tx)));
          const drops = num(c.stats.dropped);
          if (c.stats.dropped > 0) drops.classList.add("warn");
          tr.appendChild(drops);
          tr.dataset.topic = c.topic;
          table.appendChild(tr);
        });
        box.appendChild(table);
      }
      container.appendChild(box);
    });
  }

  function renderEvents(events) {
    const body = $("events").tBodies[0];
    body.replaceChildren();
    events.slice().reverse().slice(0, 100).forEach((e) => {
      const tr = row([new Date(e.at).toLocaleTimeString(), el("span", e.node, "mono"), el("span", e.kind, "badge " + e.kind), el("span", e.subject, "mono"), e.detail]);
      tr.dataset.kind = e.kind;
      body.appendChild(tr);
    });
    if (events.length === 0) body.appendChild(row([el("span", "nothing yet", "empty")]));
  }

  async function refresh() {
    try {
      const response = await fetch("/cluster", { headers: { Authorization: token }, cache: "no-store" });
      if (!response.ok) {
        const body = await response.json().catch(() => ({ message: response.statusText }));
        $("health").textContent = "error " + response.status + ": " + body.message;
        $("health").className = "bad";
        if (response.status === 401 || response.status === 403) stop(body.message);
        return;
      }
      const data = await response.json();
      $("self").textContent = data.self;
      $("build").textContent = data.build;
      renderMembers(data.members);
      renderNodes(data.members, data.connections);
      renderEvents(data.events);
      const missing = $("missing");
      if (data.missing_nodes.length > 0) {
        missing.textContent = "No answer in time from: " + data.missing_nodes.join(", ") + " — their connections are not shown.";
        missing.classList.remove("hidden");
      } else {
        missing.classList.add("hidden");
      }
      $("updated").textContent = new Date().toLocaleTimeString();
      $("health").textContent = data.members.length + " members, " + data.connections.length + " connections";
      $("health").className = "ok";
    } catch (e) {
      $("health").textContent = "unreachable: " + e.message;
      $("health").className = "bad";
    }
  }

  function stop(message) {
    clearInterval(timer);
    timer = null;
    token = null;
    $("login-error").textContent = message;
  }

  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    $("token").value = "";
    $("login-error").textContent = "";
    if (timer) clearInterval(timer);
    refresh();
    timer = setInterval(refresh, REFRESH_MS);
  });
})();
