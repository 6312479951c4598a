// trajset report: the session list (search, pages) and the tree of the session chosen.
// Reads the JSON in <script id="report-data">; no network, no library.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const sessions = data.sessions;
  const PAGE = 50;
  let shown = sessions;
  let page = 0;

  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const SVG = "http://www.w3.org/2000/svg";
  const svg = (tag, attrs) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  };
  const score = (s) => (s === null || s === undefined ? "–" : Number(s).toFixed(2));

  function matches(s, q) {
    if (!q) return true;
    if (s.id.toLowerCase().includes(q)) return true;
    return s.leaves.some((l) => String(l.leaf).toLowerCase().includes(q) || String(l.label || "").toLowerCase().includes(q));
  }

  function renderList() {
    const body = $("session-rows");
    body.replaceChildren();
    const start = page * PAGE;
    for (const s of shown.slice(start, start + PAGE)) {
      const i = sessions.indexOf(s);
      const row = el("tr", { "data-session": String(i), class: "session-row", tabindex: "0" });
      row.append(el("td", {}, s.id), el("td", {}, String(s.leaves.length)), el("td", {}, String(s.forks)), el("td", {}, score(s.best)));
      row.addEventListener("click", () => openSession(i));
      row.addEventListener("keydown", (ev) => { if (ev.key === "Enter") openSession(i); });
      body.append(row);
    }
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    $("page-info").textContent = `${shown.length} of ${sessions.length} sessions · page ${page + 1} of ${pages}`;
    $("prev").disabled = page === 0;
    $("next").disabled = page + 1 >= pages;
  }

  function layout(s) {
    const children = s.nodes.map(() => []);
    const roots = [];
    s.nodes.forEach((n, i) => (n.p < 0 ? roots : children[n.p]).push(i));
    const pos = new Array(s.nodes.length);
    let row = 0;
    const place = (i, depth) => {
      if (!children[i].length) { pos[i] = { x: depth, y: row++ }; return; }
      children[i].forEach((c) => place(c, depth + 1));
      const first = pos[children[i][0]].y, last = pos[children[i][children[i].length - 1]].y;
      pos[i] = { x: depth, y: (first + last) / 2 };
    };
    // a parent always comes before its children, so depths take one pass
    const dep = [];
    s.nodes.forEach((n, i) => { dep[i] = n.p < 0 ? 0 : dep[n.p] + 1; });
    const maxDepth = dep.length ? dep.reduce((a, b) => Math.max(a, b), 0) : 0;
    if (maxDepth < 3000) roots.forEach((r) => place(r, 1));  // place() recurses once per level
    else s.nodes.forEach((_, i) => { pos[i] = { x: dep[i] + 1, y: 0 }; });
    return { pos, rows: Math.max(row, 1), depth: maxDepth + 1 };
  }

  function pathTo(s, node) {
    const on = new Set();
    for (let i = node; i >= 0; i = s.nodes[i].p) on.add(i);
    return on;
  }

  function openSession(i) {
    const s = sessions[i];
    location.hash = `s=${i}`;
    $("tree-title").textContent = `Session ${s.id}`;
    const pref = s.leaves.find((l) => l.preferred) || s.leaves.find((l) => l.main);
    const onPath = pref && pref.node >= 0 ? pathTo(s, pref.node) : new Set();
    const { pos, rows, depth } = layout(s);
    const dx = 34, dy = 26, r = 7;
    const w = (depth + 1) * dx + 220, h = rows * dy + 30;
    const g = svg("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}`, id: "tree-svg" });
    const X = (p) => p.x * dx, Y = (p) => p.y * dy + 20;
    g.append(svg("circle", { cx: 0.5 * dx, cy: h / 2, r: 4, class: "start" }));
    s.nodes.forEach((n, k) => {
      const a = n.p >= 0 ? pos[n.p] : { x: 0.5, y: (h / 2 - 20) / dy };
      const b = pos[k];
      g.append(svg("path", {
        d: `M${X(a)},${Y(a)} C${X(a) + dx / 2},${Y(a)} ${X(b) - dx / 2},${Y(b)} ${X(b)},${Y(b)}`,
        class: onPath.has(k) ? "edge preferred" : "edge abandoned",
      }));
    });
    s.nodes.forEach((n, k) => {
      const c = svg("circle", {
        cx: X(pos[k]), cy: Y(pos[k]), r, class: `node src-${n.s || "other"}${onPath.has(k) ? " on-path" : ""}`,
        "data-node": k, tabindex: 0,
      });
      const t = svg("title", {});
      t.textContent = `${n.s}: ${n.t || (n.c || []).join(", ")}`;
      c.append(t);
      c.addEventListener("click", () => showNode(s, k));
      c.addEventListener("keydown", (ev) => { if (ev.key === "Enter") showNode(s, k); });
      g.append(c);
    });
    for (const l of s.leaves) {
      if (l.node < 0) continue;
      const p = pos[l.node];
      const label = svg("text", { x: X(p) + r + 4, y: Y(p) + 4, class: l.preferred ? "leaf preferred" : "leaf" });
      label.textContent = `${l.preferred ? "★ " : ""}${score(l.score)}${l.label ? " " + l.label : ""}${l.pass === true ? " pass" : l.pass === false ? " fail" : ""}`;
      g.append(label);
    }
    $("tree").replaceChildren(g);
    const leaves = $("leaves");
    leaves.replaceChildren();
    for (const l of s.leaves) {
      const row = el("tr", { class: l.preferred ? "preferred" : "" });
      row.append(el("td", {}, l.leaf), el("td", {}, l.preferred ? "preferred" : l.abandoned_at ? `abandoned at ${l.abandoned_at}` : ""),
        el("td", {}, String(l.steps)), el("td", {}, score(l.score)), el("td", {}, l.label || ""), el("td", {}, l.atif || ""));
      leaves.append(row);
    }
    $("detail").replaceChildren(el("p", { class: "hint" }, "Click a node to see its step."));
    $("session-view").hidden = false;
  }

  function showNode(s, k) {
    const n = s.nodes[k];
    const box = $("detail");
    box.replaceChildren();
    box.append(el("h3", {}, `${n.s || "step"}${n.m ? " · " + n.m : ""}`));
    box.append(el("p", { class: "meta" }, `entry ${n.e || "–"}${n.k ? ` · ${n.k} tokens` : ""}`));
    if (n.t) box.append(el("pre", { class: "message" }, n.t));
    if (n.r) box.append(el("pre", { class: "reasoning" }, n.r));
    if (n.c) box.append(el("p", { class: "calls" }, `tool calls: ${n.c.join(", ")}`));
    for (const o of n.o || []) box.append(el("pre", { class: "output" }, o));
    const through = s.leaves.filter((l) => l.node >= 0 && pathTo(s, l.node).has(k)).map((l) => l.leaf);
    box.append(el("p", { class: "meta" }, `on the path of ${through.length} trajector${through.length === 1 ? "y" : "ies"}`));
    document.querySelectorAll("#tree .node.selected").forEach((e) => e.classList.remove("selected"));
    const dot = document.querySelector(`#tree .node[data-node="${k}"]`);
    if (dot) dot.classList.add("selected");
  }

  $("search").addEventListener("input", (ev) => {
    const q = ev.target.value.trim().toLowerCase();
    shown = sessions.filter((s) => matches(s, q));
    page = 0;
    renderList();
  });
  $("prev").addEventListener("click", () => { page = Math.max(0, page - 1); renderList(); });
  $("next").addEventListener("click", () => { page += 1; renderList(); });
  renderList();
  const m = /^#s=(\d+)$/.exec(location.hash);
  if (m && sessions[Number(m[1])]) openSession(Number(m[1]));
  else if (sessions.length === 1) openSession(0);
})();
