// The fleet page: counts by provision state, a feed of changes and a
// node's step timeline, all read from the API this page is served by.
// Plain JavaScript, no build step, no other host.
'use strict';

(function () {
  const FIELDS = 'uuid,name,provision_state,power_state,maintenance';
  const MAX_FEED = 200;
  const STATE_ORDER = [
    'enroll', 'verifying', 'manageable', 'inspecting', 'inspect wait',
    'inspect failed', 'cleaning', 'clean wait', 'clean hold',
    'clean failed', 'available', 'deploying', 'wait call-back',
    'deploy hold', 'deploy failed', 'active', 'servicing', 'service wait',
    'service hold', 'service failed', 'deleting', 'error', 'rescuing',
    'rescue wait', 'rescue failed', 'rescue', 'unrescuing',
    'unrescue failed', 'adopting', 'adopt failed'];
  const KIND_NAMES = {deploy: 'deployment', clean: 'cleaning',
                      service: 'servicing'};
  const SVG = 'http://www.w3.org/2000/svg';

  const page = {
    version: null,
    token: sessionStorage.getItem('baremetal-token'),
    nodes: new Map(),
    loaded: false,
    pending: [],            // events that came before the fleet loaded
    lastEventId: null,
    shown: null,            // the UUID of the node shown
    plan: null,
    refreshTimer: null,
  };

  const $ = (id) => document.getElementById(id);

  class Unauthorized extends Error {}

  function headers(extra) {
    const h = {'X-OpenStack-Ironic-API-Version': page.version || '1.1'};
    if (page.token) h['X-Auth-Token'] = page.token;
    return Object.assign(h, extra || {});
  }

  function faultOf(body) {
    try {
      return JSON.parse(body.error_message).faultstring;
    } catch (e) {
      return body && (body.error_message || body.description);
    }
  }

  async function api(path) {
    const resp = await fetch(path, {headers: headers(),
                                    credentials: 'same-origin'});
    if (resp.status === 401) throw new Unauthorized('401');
    const body = resp.status === 204 ? null : await resp.json();
    if (!resp.ok) throw new Error(faultOf(body) || resp.statusText);
    return body;
  }

  // a link the API gives (absolute, with its own idea of the host):
  // asked of this page's origin
  function local(url) {
    const u = new URL(url, location.href);
    return u.pathname + u.search;
  }

  function setStatus(text) {
    const el = $('status');
    el.textContent = text;
    el.dataset.state = text;
  }

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ---- the fleet ----
  async function loadFleet() {
    const nodes = new Map();
    let url = '/v1/nodes?fields=' + FIELDS + '&limit=1000';
    while (url) {
      const body = await api(url);
      for (const n of body.nodes) nodes.set(n.uuid, n);
      url = body.next ? local(body.next) : null;
    }
    page.nodes = nodes;
    page.loaded = true;
    const early = page.pending;
    page.pending = [];
    for (const ev of early) applyToFleet(ev);
    renderCounts(new Set());
  }

  function renderCounts(changed) {
    const counts = new Map();
    for (const n of page.nodes.values()) {
      const s = n.provision_state || 'none';
      counts.set(s, (counts.get(s) || 0) + 1);
    }
    const order = STATE_ORDER.filter((s) => counts.has(s));
    for (const s of counts.keys()) if (!order.includes(s)) order.push(s);
    const list = $('counts');
    list.replaceChildren();
    for (const s of order) {
      const li = el('li', {'data-state': s});
      li.append(el('span', {class: 'n'}, String(counts.get(s))),
                el('span', {class: 'name'}, s));
      if (changed.has(s)) {
        li.classList.add('flash');
        setTimeout(() => li.classList.remove('flash'), 1500);
      }
      list.append(li);
    }
    $('total').textContent = '(' + page.nodes.size + ' nodes)';
  }

  async function fetchNode(uuid) {
    try {
      const n = await api('/v1/nodes/' + encodeURIComponent(uuid) +
                          '?fields=' + FIELDS);
      const known = page.nodes.get(uuid);
      if (known) {
        // events that came meanwhile are newer than this answer
        known.name = n.name;
        return;
      }
      page.nodes.set(n.uuid, n);
    } catch (e) {
      page.nodes.delete(uuid);     // gone (or not ours to see)
    }
    renderCounts(new Set());
  }

  // an event's change to the fleet: the states whose counts moved
  function applyToFleet(ev) {
    const known = page.nodes.get(ev.node);
    if (ev.field === 'node' && ev.new === 'deleted') {
      page.nodes.delete(ev.node);
      return known ? [known.provision_state] : [];
    }
    if (ev.field === 'node' && ev.new === 'created') {
      page.nodes.set(ev.node, {uuid: ev.node, name: null,
                               provision_state: ev.provision_state});
      fetchNode(ev.node);           // its name
      return [ev.provision_state];
    }
    if (!known) {
      fetchNode(ev.node);           // created before the page loaded
      return [];
    }
    if (ev.field in known) known[ev.field] = ev.new;
    return ev.field === 'provision_state' ? [ev.old, ev.new] : [];
  }

  // ---- the feed ----
  function show(value) {
    if (value === null || value === undefined) return '—';
    if (typeof value === 'object' && value.interface && value.step) {
      return value.interface + '.' + value.step;     // a step
    }
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  }

  function addToFeed(ev) {
    const n = page.nodes.get(ev.node);
    const li = el('li', {'data-node': ev.node, 'data-field': ev.field});
    const when = ev.time ? new Date(ev.time) : new Date();
    li.append(el('time', {datetime: ev.time || ''},
                 when.toLocaleTimeString()));
    const a = el('a', {href: '#node=' + ev.node},
                 (n && n.name) || ev.node.slice(0, 8));
    li.append(a, ' ', el('span', {class: 'field'}, ev.field), ' ',
              el('span', {class: 'old'}, show(ev.old)), ' → ',
              el('span', {class: 'new'}, show(ev.new)));
    const list = $('feed');
    list.prepend(li);
    while (list.children.length > MAX_FEED) list.lastElementChild.remove();
  }

  function onEvent(ev) {
    addToFeed(ev);
    if (!page.loaded) {
      page.pending.push(ev);
    } else {
      const moved = applyToFleet(ev);
      if (moved.length) renderCounts(new Set(moved));
    }
    if (ev.node === page.shown) {
      clearTimeout(page.refreshTimer);
      page.refreshTimer = setTimeout(() => showNode(page.shown), 250);
    }
  }

  // Server-Sent Events read with fetch(): EventSource cannot send the
  // X-Auth-Token header a Keystone-protected service needs.
  async function follow() {
    let before = false;
    for (;;) {
      try {
        const extra = {'Accept': 'text/event-stream'};
        if (page.lastEventId !== null) {
          extra['Last-Event-ID'] = String(page.lastEventId);
        }
        const resp = await fetch('/events', {
          headers: headers(extra), credentials: 'same-origin',
          cache: 'no-store'});
        if (resp.status === 401) {
          askToken(page.token ? 'The token was refused.' : '');
          return;
        }
        if (!resp.ok || !resp.body) throw new Error('HTTP ' + resp.status);
        setStatus('live');
        if (before && page.lastEventId === null && page.loaded) {
          // back without a place to resume from: read the fleet again
          loadFleet().catch((e) => console.warn('fleet:', e));
        }
        before = true;
        await readEvents(resp.body.getReader());
      } catch (e) {
        console.warn('change feed:', e);
      }
      setStatus('reconnecting');
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  async function readEvents(reader) {
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return;
      buf += decoder.decode(value, {stream: true}).replace(/\r\n?/g, '\n');
      let end;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        dispatch(buf.slice(0, end));
        buf = buf.slice(end + 2);
      }
    }
  }

  function dispatch(block) {
    let id = null;
    let type = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (!line || line.startsWith(':')) continue;     // keep-alive
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (name === 'id') id = value;
      else if (name === 'event') type = value;
      else if (name === 'data') data.push(value);
    }
    if (id !== null) page.lastEventId = id;
    if (!data.length || type !== 'node') return;
    try {
      onEvent(JSON.parse(data.join('\n')));
    } catch (e) {
      console.warn('change feed: bad event', e);
    }
  }

  // ---- one node ----
  function seconds(s) {
    if (s === null || s === undefined) return '';
    return s < 10 ? s.toFixed(2) + ' s' : Math.round(s) + ' s';
  }

  async function showNode(ident) {
    let plan;
    try {
      plan = await api('/nodes/' + encodeURIComponent(ident) + '/plan');
    } catch (e) {
      $('node').hidden = false;
      $('node-title').textContent = ident;
      $('node-summary').textContent = e.message;
      $('plan').tBodies[0].replaceChildren();
      $('timeline').replaceChildren();
      return;
    }
    page.shown = plan.uuid;
    page.plan = plan;
    if (location.hash !== '#node=' + plan.uuid) {
      history.replaceState(null, '', '#node=' + plan.uuid);
    }
    $('node').hidden = false;
    $('node-title').textContent = plan.name ?
      plan.name + ' (' + plan.uuid + ')' : plan.uuid;
    let summary = plan.provision_state +
      (plan.target_provision_state ? ' → ' + plan.target_provision_state
                                   : '') +
      ', ' + (plan.power_state || 'power unknown') +
      (plan.work !== 'none' ? ', ' + KIND_NAMES[plan.work] + ' running'
                            : '');
    if (plan.waiting) {
      summary += '; ' + plan.waiting.reason + ' for ' +
        seconds(plan.waiting.seconds);
    }
    if (plan.last_error) summary += '; last error: ' + plan.last_error;
    $('node-summary').textContent = summary;
    renderSteps(plan);
    if (plan.work !== 'none' && plan.timings[plan.work]) {
      $('kind').value = plan.work;
    }
    renderTimeline();
  }

  function renderSteps(plan) {
    const body = $('plan').tBodies[0];
    body.replaceChildren();
    for (const s of plan.steps) {
      const tr = el('tr', {'data-state': s.state});
      let time = seconds(s.seconds);
      if (s.state === 'running') {
        time += ' (waiting on ' + s.waiting_on + ')';
      }
      tr.append(el('td', {}, String(s.index)),
                el('td', {}, s.interface + '.' + s.step),
                el('td', {class: 'state-' + s.state}, s.state),
                el('td', {}, time));
      body.append(tr);
    }
    $('plan').hidden = !plan.steps.length;
  }

  function renderTimeline() {
    const box = $('timeline');
    box.replaceChildren();
    const kind = $('kind').value;
    const rec = page.plan && page.plan.timings[kind];
    if (!rec) {
      $('timeline-summary').textContent = 'no ' + KIND_NAMES[kind] +
        ' recorded';
      return;
    }
    $('timeline-summary').textContent = rec.outcome + ', ' +
      seconds(rec.seconds) + (rec.started_at ? ' from ' +
      new Date(rec.started_at).toLocaleString() : '');
    const t0 = Date.parse(rec.started_at);
    const total = Math.max(rec.seconds || 0, 0.001) * 1000;
    const rows = [];
    if (rec.preparation_seconds >= 0.05) {
      rows.push({label: 'preparation', cls: 'prep-bar', start: t0,
                 ms: rec.preparation_seconds * 1000,
                 text: seconds(rec.preparation_seconds)});
    }
    for (const s of rec.steps) {
      rows.push({label: s.interface + '.' + s.step,
                 cls: 'bar step-bar ' + s.outcome,
                 start: Date.parse(s.started_at),
                 ms: (s.seconds || 0) * 1000,
                 text: seconds(s.seconds) + (s.outcome === 'done' ? '' :
                                             ' ' + s.outcome),
                 step: s.step});
    }
    const W = 900, LEFT = 230, RIGHT = 90, ROW = 24, TOP = 8;
    const H = TOP + rows.length * ROW + 26;
    const scale = (W - LEFT - RIGHT) / total;
    const chart = svg('svg', {viewBox: '0 0 ' + W + ' ' + H,
                              role: 'img', 'data-kind': kind,
                              'aria-label': KIND_NAMES[kind] + ' timeline'});
    rows.forEach((r, i) => {
      const y = TOP + i * ROW;
      const x = LEFT + Math.max(0, r.start - t0) * scale;
      const w = Math.max(2, r.ms * scale);
      chart.append(svg('text', {x: 4, y: y + 15}, r.label));
      const rect = svg('rect', {x: x, y: y + 3, width: w, height: ROW - 8,
                                rx: 2, class: r.cls});
      if (r.step) rect.setAttribute('data-step', r.step);
      rect.append(svg('title', {}, r.label + ': ' + r.text));
      chart.append(rect, svg('text', {x: x + w + 4, y: y + 15}, r.text));
    });
    const axisY = TOP + rows.length * ROW + 4;
    chart.append(svg('line', {x1: LEFT, x2: W - RIGHT, y1: axisY,
                              y2: axisY, class: 'axis'}),
                 svg('text', {x: LEFT, y: axisY + 16}, '0 s'),
                 svg('text', {x: W - RIGHT - 30, y: axisY + 16},
                     seconds(total / 1000)));
    box.append(chart);
  }

  // ---- sign-in (Keystone) ----
  function askToken(message) {
    $('main').hidden = true;
    $('login').hidden = false;
    $('login-error').textContent = message || '';
    setStatus('signed out');
  }

  async function start() {
    setStatus('starting');
    const root = await (await fetch('/', {
      headers: {'Accept': 'application/json'}})).json();
    page.version = root.default_version.version;
    follow();
    try {
      await loadFleet();
    } catch (e) {
      if (e instanceof Unauthorized) {
        askToken(page.token ? 'The token was refused.' : '');
        return;
      }
      setStatus('error');
      throw e;
    }
    $('login').hidden = true;
    $('main').hidden = false;
    const m = location.hash.match(/node=([^&]+)/);
    if (m) showNode(decodeURIComponent(m[1]));
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('login').addEventListener('submit', (e) => {
      e.preventDefault();
      page.token = $('token').value.trim();
      sessionStorage.setItem('baremetal-token', page.token);
      start();
    });
    $('pick').addEventListener('submit', (e) => {
      e.preventDefault();
      showNode($('node-ident').value.trim());
    });
    $('kind').addEventListener('change', renderTimeline);
    window.addEventListener('hashchange', () => {
      const m = location.hash.match(/node=([^&]+)/);
      if (m && decodeURIComponent(m[1]) !== page.shown) {
        showNode(decodeURIComponent(m[1]));
      }
    });
    start();
  });
})();
