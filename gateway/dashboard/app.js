// maskgate's dashboard: live statistics from GET /admin/events (Server-Sent Events),
// the request log, threads and catalogs from the admin API. No library: the DOM is built
// with textContent (nothing the gateway sends is parsed as HTML) and the chart is SVG
// drawn by hand.
'use strict';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const HISTORY = 300; // seconds the chart shows
const WINDOW = 10; // seconds of the chart's rolling hit rate

// el makes an element with attributes (class, title, data-*) and children (strings
// become text nodes).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === undefined || c === null) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

const num = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));
const rate = (n) => (n === null || n === undefined ? '–' : n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));
const pct = (r) => (r === null || r === undefined ? '–' : (100 * r).toFixed(1) + ' %');
const msec = (v) => (v === null || v === undefined ? '–' : v >= 100 ? Math.round(v) + ' ms' : v.toFixed(1) + ' ms');
const pair = (p) => (p && p.n ? msec(p.p50) + ' / ' + msec(p.p95) : '–');

function ago(iso) {
  if (!iso) return '–';
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return Math.round(s) + ' s ago';
  if (s < 3600) return Math.round(s / 60) + ' min ago';
  return (s / 3600).toFixed(1) + ' h ago';
}

function duration(s) {
  s = Math.floor(s);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return h ? `${h} h ${m} min` : m ? `${m} min ${s % 60} s` : `${s} s`;
}

function setText(id, text, value) {
  const e = $(id);
  if (!e) return;
  e.textContent = text;
  if (value !== undefined) e.dataset.value = value === null ? '' : String(value);
}

// api fetches an admin endpoint with the session cookie; an expired session goes back
// to the sign-in form.
async function api(path, init) {
  const resp = await fetch(path, Object.assign({ credentials: 'same-origin', headers: { Accept: 'application/json' } }, init));
  if (resp.status === 401) {
    location.href = '/admin/';
    throw new Error('signed out');
  }
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error((body.error && body.error.message) || resp.statusText);
  return body;
}

// ---- live statistics ----

let points = new Map(); // unix second → {requests, prompt_tokens, cached_tokens}
let lastRequests = -1;

function onSnapshot(snap) {
  if (snap.history) {
    points = new Map();
    for (const p of snap.history) points.set(p.t, p);
  }
  if (snap.point) points.set(snap.point.t, snap.point);
  const now = Math.floor(Date.parse(snap.time) / 1000);
  for (const t of points.keys()) if (t < now - HISTORY - WINDOW) points.delete(t);

  const t = snap.totals;
  setText('total-requests', num(t.requests), t.requests);
  setText('total-rps', rate(t.requests_per_s));
  setText('total-errors', num(t.errors));
  setText('total-hit-rate', pct(t.hit_rate), t.hit_rate);
  setText('window-hit-rate', pct(t.hit_rate_window), t.hit_rate_window);
  setText('total-prompt', num(t.prompt_tokens));
  setText('total-prompt-rate', rate(t.prompt_tokens_per_s));
  setText('total-cached', num(t.cached_tokens));
  setText('total-computed', num(t.computed_tokens));
  setText('total-computed-rate', rate(t.computed_tokens_per_s));
  setText('total-ttft', pair(t.ttft_ms));
  setText('total-tpot', pair(t.tpot_ms));
  setText('uptime', duration(snap.uptime_s));
  setText('updated', new Date(snap.time).toLocaleTimeString());
  setText('subscribers', String(snap.subscribers));
  const th = snap.threads;
  if (th) {
    setText('threads-count', num(th.count), th.count);
    setText('threads-count-2', num(th.count));
    setText('threads-bytes', th.bytes >= 1 << 20 ? (th.bytes / (1 << 20)).toFixed(1) + ' MiB' : (th.bytes / 1024).toFixed(1) + ' KiB');
    setText('threads-oldest', ago(th.oldest_access));
    setText('threads-oldest-2', ago(th.oldest_access));
  } else {
    const why = snap.threads_error || 'not kept';
    setText('threads-count', '–', null);
    setText('threads-count-2', '–');
    setText('threads-oldest', why);
    setText('threads-oldest-2', '–');
  }
  renderLive(snap.rows);
  drawChart(now);
  if (t.requests !== lastRequests) {
    lastRequests = t.requests;
    loadRequests();
  }
}

function renderLive(rows) {
  const body = $('live-table').tBodies[0];
  body.replaceChildren();
  if (!rows.length) {
    body.append(el('tr', { class: 'empty' }, el('td', { colspan: 17 }, 'no requests yet')));
    return;
  }
  for (const r of rows) {
    const strategy = el('span', { class: 'badge strategy' }, r.strategy);
    if (r.auto_choice) strategy.title = 'auto chose ' + r.auto_choice;
    body.append(el('tr', { 'data-backend': r.backend, 'data-profile': r.profile, 'data-strategy': r.strategy },
      el('td', {}, r.backend), el('td', {}, r.profile || '–'), el('td', {}, strategy, autoEstimates(r.auto)),
      el('td', { class: 'n', 'data-value': r.requests }, num(r.requests)),
      el('td', { class: 'n' }, rate(r.requests_per_s)),
      el('td', { class: 'n' }, num(r.errors)),
      el('td', { class: 'n', 'data-value': r.hit_rate === null ? '' : r.hit_rate }, pct(r.hit_rate)),
      el('td', { class: 'n' }, pct(r.hit_rate_window)),
      el('td', { class: 'n' }, rate(r.prompt_tokens_per_s)),
      el('td', { class: 'n' }, rate(r.cached_tokens_per_s)),
      el('td', { class: 'n' }, rate(r.computed_tokens_per_s)),
      el('td', { class: 'n' }, num(r.prompt_tokens)),
      el('td', { class: 'n' }, num(r.cached_tokens)),
      el('td', { class: 'n' }, num(r.computed_tokens)),
      el('td', { class: 'n' }, pair(r.ttft_ms)),
      el('td', { class: 'n' }, pair(r.tpot_ms)),
      el('td', { class: 'n' }, num(r.disabled_calls))));
  }
}

// autoEstimates is auto's latest decision for a row's profile: each strategy's estimated
// engine seconds per session, the chosen one first and marked, the reason on hover, then
// struck through those left out because their sessions outgrow the context window.
function autoEstimates(a) {
  if (!a) return '';
  const ests = [...a.estimates].sort((x, y) => (y.strategy === a.strategy) - (x.strategy === a.strategy));
  const box = el('div', { class: 'auto', title: a.reason, 'data-auto': a.strategy });
  ests.forEach((e, i) => {
    if (i > 0) box.append(' · ');
    box.append(el(e.strategy === a.strategy ? 'b' : 'span', {}, e.strategy + ' ' + secs(e.seconds_per_session)));
  });
  (a.unfit || []).forEach((s) => box.append(' · ', el('s', { title: 'its session outgrows the context window' }, s)));
  return box;
}

function secs(s) {
  return s >= 10 ? s.toFixed(0) + ' s' : s >= 0.1 ? s.toFixed(2) + ' s' : (s * 1000).toFixed(1) + ' ms';
}

// drawChart plots, for each of the last HISTORY seconds, the hit rate over the WINDOW
// seconds that end there (a gap where no prompt tokens came), over bars of requests/s.
function drawChart(now) {
  const chart = $('hit-chart');
  const W = 900, H = 200, L = 38, R = 8, T = 8, B = 22;
  const x = (t) => L + ((t - (now - HISTORY)) / HISTORY) * (W - L - R);
  const y = (r) => T + (1 - r) * (H - T - B);
  chart.replaceChildren();
  for (const r of [0, 0.25, 0.5, 0.75, 1]) {
    chart.append(svg('line', { class: 'grid', x1: L, x2: W - R, y1: y(r), y2: y(r) }));
    const label = svg('text', { class: 'axis', x: 2, y: y(r) + 4 });
    label.textContent = r * 100 + '%';
    chart.append(label);
  }
  for (let m = 5; m >= 0; m--) {
    const label = svg('text', { class: 'axis', x: Math.min(x(now - m * 60) - 10, W - 30), y: H - 6 });
    label.textContent = m ? `−${m} min` : 'now';
    chart.append(label);
  }
  let maxReq = 0;
  for (const p of points.values()) maxReq = Math.max(maxReq, p.requests);
  const bw = Math.max(1, (W - L - R) / HISTORY - 0.5);
  for (const p of points.values()) {
    if (p.t < now - HISTORY || !maxReq) continue;
    const h = (p.requests / maxReq) * (H - T - B) * 0.35;
    chart.append(svg('rect', { class: 'bar', x: x(p.t) - bw, y: H - B - h, width: bw, height: h }));
  }
  const segments = [];
  let seg = [];
  for (let t = now - HISTORY; t < now; t++) {
    let prompt = 0, cached = 0;
    for (let u = t - WINDOW + 1; u <= t; u++) {
      const p = points.get(u);
      if (p) { prompt += p.prompt_tokens; cached += p.cached_tokens; }
    }
    if (prompt > 0) seg.push([x(t), y(cached / prompt)]);
    else if (seg.length) { segments.push(seg); seg = []; }
  }
  if (seg.length) segments.push(seg);
  if (!segments.length) {
    const none = svg('text', { class: 'none', x: W / 2 - 110, y: H / 2 });
    none.textContent = 'no prompt tokens in the last 5 minutes';
    chart.append(none);
    return;
  }
  for (const s of segments) {
    const line = s.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' ');
    const base = y(0).toFixed(1);
    chart.append(svg('polygon', { class: 'area', points: `${s[0][0].toFixed(1)},${base} ${line} ${s[s.length - 1][0].toFixed(1)},${base}` }));
    chart.append(svg('polyline', { class: 'line', points: line }));
  }
}

function connect() {
  const es = new EventSource('/admin/events');
  const conn = $('conn');
  es.onopen = () => { conn.textContent = 'live'; conn.className = 'conn on'; };
  es.onmessage = (e) => onSnapshot(JSON.parse(e.data));
  es.onerror = () => {
    conn.textContent = 'reconnecting…';
    conn.className = 'conn off';
    if (es.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
  };
}

// ---- request log ----

let loading = false;

async function loadRequests() {
  if (loading) return;
  loading = true;
  try {
    const log = await api('/admin/requests?limit=100');
    setText('log-capacity', num(log.capacity));
    renderRequests(log.data);
  } catch (err) {
    console.warn('request log:', err);
  } finally {
    loading = false;
  }
}

function renderRequests(recs) {
  const body = $('request-log').tBodies[0];
  body.replaceChildren();
  if (!recs.length) {
    body.append(el('tr', { class: 'empty' }, el('td', { colspan: 15 }, 'no requests yet')));
    return;
  }
  for (const r of recs) {
    const cls = r.status < 400 ? 'status-ok' : r.status < 500 ? 'status-4' : 'status-5';
    const backend = r.replica ? `${r.backend} #${r.replica}` : r.backend;
    let thread = '';
    if (r.thread) {
      thread = el('span', {}, el('code', { title: r.thread }, r.thread.slice(0, 10) + '…'), ' ',
        el('button', { class: 'small', title: 'evict this thread', onclick: () => evict(r.thread) }, 'evict'));
    }
    body.append(el('tr', { 'data-request-id': r.request_id },
      el('td', { title: r.time }, new Date(r.time).toLocaleTimeString()),
      el('td', {}, r.key), el('td', {}, r.model || '–'), el('td', {}, backend),
      el('td', {}, el('span', { class: 'badge strategy' }, r.strategy)), el('td', {}, r.door), el('td', {}, r.profile || '–'),
      el('td', { class: 'n ' + cls }, r.status),
      el('td', { class: 'n' }, r.duration_ms.toFixed(1)),
      el('td', { class: 'n' }, r.ttft_ms ? r.ttft_ms.toFixed(1) : '–'),
      el('td', { class: 'n' }, num(r.prompt_tokens)),
      el('td', { class: 'n' }, num(r.cached_tokens)),
      el('td', { class: 'n' }, num(r.computed_tokens)),
      el('td', {}, r.miss ? el('span', { class: 'badge miss' }, r.miss) : ''),
      el('td', {}, thread)));
  }
}

// ---- threads ----

function say(text) { $('threads-message').textContent = text; }

async function evict(id) {
  try {
    const out = await api('/admin/threads/' + encodeURIComponent(id), { method: 'DELETE' });
    say(out.deleted ? `Evicted thread ${id.slice(0, 10)}…` : `No thread ${id.slice(0, 10)}… was held.`);
  } catch (err) {
    say('Could not evict: ' + err.message);
  }
}

async function evictAll() {
  if (!confirm('Evict every thread? Their loaded tools and hidden exchanges are forgotten.')) return;
  try {
    const out = await api('/admin/threads', { method: 'DELETE' });
    say(`Evicted ${out.cleared} thread${out.cleared === 1 ? '' : 's'}.`);
  } catch (err) {
    say('Could not evict: ' + err.message);
  }
}

// ---- catalogs ----

let profile = '';
let searchTimer = 0;

async function loadProfiles() {
  try {
    const out = await api('/admin/profiles');
    const sel = $('profile-select');
    sel.replaceChildren(...out.profiles.map((p) => el('option', { value: p.name }, `${p.name} (${p.tools} tools, ${p.strategy})`)));
    profile = out.profiles.length ? out.profiles[0].name : '';
    await loadCatalog();
  } catch (err) {
    console.warn('profiles:', err);
  }
}

async function loadCatalog() {
  const cat = await api('/admin/tools?profile=' + encodeURIComponent(profile));
  setText('catalog-version', cat.version ? cat.version.slice(0, 12) : '–');
  $('catalog-version').title = cat.version || '';
  setText('catalog-tools', num(cat.data.length), cat.data.length);
  setText('catalog-tokens', cat.tokens ? num(cat.tokens.total) : 'not counted');
  const body = $('catalog-table').tBodies[0];
  body.replaceChildren();
  for (const t of cat.data) {
    const f = t.function || t;
    const tokens = cat.tokens && cat.tokens.tools ? cat.tokens.tools[f.name] : undefined;
    const desc = f.description || '';
    body.append(el('tr', {}, el('td', {}, el('code', {}, f.name)), el('td', { class: 'n' }, num(tokens)),
      el('td', { class: 'desc', title: desc }, desc.length > 140 ? desc.slice(0, 140) + '…' : desc)));
  }
  search();
}

async function search() {
  const q = $('tool-search').value.trim();
  const list = $('search-results');
  if (!q) { list.replaceChildren(); return; }
  try {
    const out = await api(`/admin/tools/search?profile=${encodeURIComponent(profile)}&k=8&q=${encodeURIComponent(q)}`);
    list.replaceChildren(...out.results.map((r) => el('li', {}, el('code', {}, r.name), ' ',
      el('span', { class: 'score' }, r.score.toFixed(2)), ' — ', r.description || '')));
    if (!out.results.length) list.append(el('li', { class: 'score' }, 'no tool matches'));
  } catch (err) {
    list.replaceChildren(el('li', { class: 'score' }, err.message));
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('evict-all').addEventListener('click', evictAll);
  $('evict-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const id = $('thread-id').value.trim();
    if (id) evict(id);
  });
  $('profile-select').addEventListener('change', (e) => { profile = e.target.value; loadCatalog(); });
  $('tool-search').addEventListener('input', () => { clearTimeout(searchTimer); searchTimer = setTimeout(search, 200); });
  connect();
  loadProfiles();
  loadRequests();
});
