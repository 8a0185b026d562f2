// The rl-scheduler dashboard: one page, hash routes, plain DOM. It speaks only the routes of
// docs/http.md, with the token kept in localStorage under "rls.token".
'use strict';

(() => {
  const TOKEN_KEY = 'rls.token';
  const STATES = ['QUEUED', 'ASSIGNED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
  const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);
  const X_KEYS = ['step', 'episode'];
  const LOG_KEEP = 5000; // lines kept on the page; older ones are dropped from the view
  const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04',
    '#db2777', '#4b5563', '#65a30d', '#7c3aed', '#0d9488'];

  let token = localStorage.getItem(TOKEN_KEY);
  let me = null;
  let view = null;

  // ---------------------------------------------------------------- DOM helpers

  const $ = (sel, root = document) => root.querySelector(sel);
  const enc = encodeURIComponent;

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v == null || v === false) continue;
        if (k === 'class') el.className = v;
        else if (k === 'dataset') Object.assign(el.dataset, v);
        else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
        else el.setAttribute(k, v === true ? '' : String(v));
      }
    }
    add(el, children);
    return el;
  }

  function add(el, children) {
    for (const c of children.flat(Infinity)) {
      if (c == null || c === false) continue;
      el.append(c instanceof Node ? c : String(c));
    }
    return el;
  }

  function pad(n) { return String(n).padStart(2, '0'); }

  function fmtTime(ms) {
    if (!ms) return '—';
    const d = new Date(ms);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  function fmtAge(ms) {
    if (!ms) return '—';
    const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (s < 60) return `${s} s ago`;
    if (s < 3600) return `${Math.floor(s / 60)} min ago`;
    return `${Math.floor(s / 3600)} h ago`;
  }

  function fmtBytes(b) {
    if (b == null) return '—';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = Number(b);
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
  }

  function fmtValue(v) {
    if (v == null) return '—';
    if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(+v.toPrecision(6));
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }

  function fmtParams(params, only) {
    if (!params) return '';
    return Object.entries(params)
      .filter(([k]) => !only || only.includes(k))
      .map(([k, v]) => `${k}=${fmtValue(v)}`).join(' ');
  }

  function stateBadge(state, attrs) {
    return h('span', Object.assign({ class: `badge state-${state || 'UNKNOWN'}` }, attrs || {}), state || '—');
  }

  function runLink(id) { return h('a', { href: `#/run/${enc(id)}` }, id); }

  function sweepLink(id) { return id ? h('a', { href: `#/sweep/${enc(id)}` }, id) : '—'; }

  function section(title, id, ...children) {
    return h('section', { class: 'panel', 'aria-labelledby': `${id}-title` },
      h('h2', { id: `${id}-title` }, title), children);
  }

  // ---------------------------------------------------------------- messages

  function showError(message) {
    $('#error-text').textContent = message;
    $('#error').hidden = false;
  }

  function clearError() {
    $('#error-text').textContent = '';
    $('#error').hidden = true;
  }

  let noticeTimer = null;
  function notice(message) {
    const n = $('#notice');
    n.textContent = message;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => { n.textContent = ''; }, 6000);
  }

  // ---------------------------------------------------------------- the API

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  async function api(path, { method = 'GET', body, raw = false } = {}) {
    const headers = { Accept: raw ? '*/*' : 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch(path, {
        method, headers, cache: 'no-store',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new ApiError(0, 'NETWORK', `The server did not answer (${e.message}).`);
    }
    if (res.status === 401) {
      signedOut('The server refused the token; sign in again.');
      throw new ApiError(401, 'UNAUTHORIZED', 'The server refused the token.');
    }
    if (!res.ok) {
      let code = `HTTP_${res.status}`;
      let message = `${res.status} ${res.statusText || ''}`.trim();
      try {
        const j = await res.json();
        if (j && j.error) {
          code = j.error.code || code;
          message = j.error.message || message;
        }
      } catch (_) { /* not JSON: keep the status line */ }
      throw new ApiError(res.status, code, message);
    }
    if (raw) return res;
    if (res.status === 204) return null;
    return res.json();
  }

  // A view's failure: the sign-in form already speaks for a 401.
  function failed(v, e) {
    if (!v.alive || (e && e.status === 401)) return;
    showError(e && e.message ? e.message : String(e));
  }

  // Server-Sent Events with the token in the query (EventSource cannot set headers). The browser
  // reconnects by itself, with Last-Event-ID; a stream it gave up on (closed) makes us check the token.
  function stream(v, path, handlers) {
    const url = `${path}${path.includes('?') ? '&' : '?'}access_token=${enc(token || '')}`;
    const es = new EventSource(url);
    for (const [name, fn] of Object.entries(handlers)) {
      if (name === 'closed' || name === 'reconnecting') continue;
      if (name === 'open') {
        es.addEventListener('open', () => { if (v.alive) fn(); });
        continue;
      }
      es.addEventListener(name, (e) => {
        if (!v.alive) return;
        let data;
        try { data = JSON.parse(e.data); } catch (_) { return; }
        fn(data, e, es);
      });
    }
    es.addEventListener('error', () => {
      if (!v.alive) return;
      if (es.readyState !== EventSource.CLOSED) {
        if (handlers.reconnecting) handlers.reconnecting();
        return;
      }
      if (handlers.closed) handlers.closed();
      api('/api/v1/me').catch(() => { /* a 401 shows the sign-in form */ });
    });
    v.onDispose(() => es.close());
    return es;
  }

  // ---------------------------------------------------------------- views and routing

  function newView() {
    if (view) view.dispose();
    const cleanups = [];
    view = {
      alive: true,
      onDispose(fn) { cleanups.push(fn); },
      every(ms, fn) { const t = setInterval(fn, ms); cleanups.push(() => clearInterval(t)); },
      dispose() {
        this.alive = false;
        for (const fn of cleanups.splice(0)) {
          try { fn(); } catch (_) { /* a cleanup must not stop the others */ }
        }
      },
    };
    return view;
  }

  function parseHash() {
    const raw = (location.hash || '').replace(/^#/, '');
    const qi = raw.indexOf('?');
    const path = qi >= 0 ? raw.slice(0, qi) : raw;
    const query = new URLSearchParams(qi >= 0 ? raw.slice(qi + 1) : '');
    const parts = path.split('/').filter(Boolean).map((p) => {
      try { return decodeURIComponent(p); } catch (_) { return p; }
    });
    return { parts, query };
  }

  const ROUTES = {
    runs: (v, main, parts, q) => viewRuns(v, main, q),
    run: (v, main, parts) => viewRun(v, main, parts[1]),
    sweeps: (v, main, parts, q) => viewSweeps(v, main, q),
    sweep: (v, main, parts, q) => viewSweep(v, main, parts[1], q),
    queue: (v, main) => viewQueue(v, main),
    workers: (v, main) => viewWorkers(v, main),
  };

  function route() {
    if (!me) return;
    clearError();
    const { parts, query } = parseHash();
    const name = parts[0] || 'runs';
    const v = newView();
    const main = $('#main');
    main.replaceChildren();
    for (const a of document.querySelectorAll('#nav a')) {
      const current = a.dataset.nav === name || (a.dataset.nav === 'runs' && name === 'run')
        || (a.dataset.nav === 'sweeps' && name === 'sweep');
      if (current) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
    const render = ROUTES[name];
    if (!render || ((name === 'run' || name === 'sweep') && !parts[1])) {
      document.title = 'Not found · rl-scheduler';
      main.append(h('h1', null, 'Not found'), h('p', null, 'No such page. ', h('a', { href: '#/runs' }, 'Go to the runs.')));
      return;
    }
    Promise.resolve()
      .then(() => render(v, main, parts, query))
      .catch((e) => failed(v, e));
  }

  function title(text) {
    document.title = `${text} · rl-scheduler`;
    return h('h1', { tabindex: '-1' }, text);
  }

  // ---------------------------------------------------------------- sign-in

  function signedOut(message) {
    token = null;
    me = null;
    localStorage.removeItem(TOKEN_KEY);
    showSignIn(message);
  }

  function showSignIn(message) {
    if (view) view.dispose();
    view = null;
    clearError();
    $('#nav').hidden = true;
    $('#user-box').hidden = true;
    document.title = 'Sign in · rl-scheduler';
    const input = h('input', {
      id: 'token-input', name: 'token', type: 'password', autocomplete: 'off', required: true,
      spellcheck: 'false', placeholder: 'rls_…', 'aria-describedby': 'signin-help',
    });
    const err = h('p', { id: 'signin-error', class: 'form-error', role: 'alert' }, message || '');
    const button = h('button', { type: 'submit', id: 'signin-submit', class: 'primary' }, 'Sign in');
    const form = h('form', { id: 'signin', class: 'signin panel' },
      h('h1', null, 'Sign in'),
      h('p', { id: 'signin-help' }, 'Paste your API token. It is kept in this browser only; make one with ',
        h('code', null, 'rls token create'), ' or ask an admin.'),
      h('label', { for: 'token-input' }, 'Token'), input, button, err);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const candidate = input.value.trim();
      if (!candidate) return;
      button.disabled = true;
      err.textContent = '';
      token = candidate;
      try {
        me = await api('/api/v1/me');
      } catch (ex) {
        if (ex.status !== 401) {
          token = null;
          err.textContent = ex.message;
          button.disabled = false;
        }
        return; // a 401 has drawn the form again, with its message
      }
      localStorage.setItem(TOKEN_KEY, token);
      signedIn();
    });
    $('#main').replaceChildren(form);
    input.focus();
  }

  function signedIn() {
    $('#me').textContent = me.admin ? `${me.user} (admin)` : me.user;
    $('#me').dataset.user = me.user;
    $('#nav').hidden = false;
    $('#user-box').hidden = false;
    route();
  }

  // ---------------------------------------------------------------- #/runs

  function runCells(r) {
    return [
      h('td', { 'data-state': r.state }, stateBadge(r.state)),
      h('td', null, r.owner || '—'),
      h('td', null, r.script || '—'),
      h('td', null, sweepLink(r.sweep)),
      h('td', { class: 'params', title: fmtParams(r.parameters) }, fmtParams(r.parameters)),
      h('td', { class: 'num' }, r.attempt != null ? `${r.attempt}/${r.maxAttempts ?? '?'}` : '—'),
      h('td', null, r.workerId || '—'),
      h('td', null, fmtTime(r.createdAt)),
      h('td', null, fmtTime(r.updatedAt)),
    ];
  }

  function runRow(r) {
    const tr = h('tr', { 'data-run-id': r.id }, h('th', { scope: 'row' }, runLink(r.id)), runCells(r));
    return tr;
  }

  function updateRunRow(tr, r) {
    const head = tr.firstElementChild;
    tr.replaceChildren(head, ...runCells(r));
    tr.classList.remove('flash');
    void tr.offsetWidth; // restart the highlight
    tr.classList.add('flash');
  }

  // Fetches a run again on each of its events; events for a run already being fetched fold into one.
  function refresher(v, fn) {
    const dirty = new Map();
    return async function refresh(id) {
      if (dirty.has(id)) { dirty.set(id, true); return; }
      dirty.set(id, false);
      try {
        do {
          dirty.set(id, false);
          let r = null;
          try {
            r = await api(`/api/v1/runs/${enc(id)}`);
          } catch (e) {
            if (e.status !== 404) throw e;
          }
          if (!v.alive) return;
          fn(id, r);
        } while (dirty.get(id));
      } catch (e) {
        failed(v, e);
      } finally {
        dirty.delete(id);
      }
    };
  }

  async function viewRuns(v, main, q) {
    const stateFilter = STATES.includes(q.get('state')) ? q.get('state') : '';
    const mineOnly = q.get('mine') === 'true';
    const stateSel = h('select', { id: 'filter-state', name: 'state' },
      h('option', { value: '' }, 'any state'),
      STATES.map((s) => h('option', { value: s, selected: s === stateFilter }, s)));
    const mine = h('input', { type: 'checkbox', id: 'filter-mine', name: 'mine', checked: mineOnly });
    const onFilter = () => {
      const p = new URLSearchParams();
      if (stateSel.value) p.set('state', stateSel.value);
      if (mine.checked) p.set('mine', 'true');
      const s = p.toString();
      location.hash = `#/runs${s ? `?${s}` : ''}`;
    };
    stateSel.addEventListener('change', onFilter);
    mine.addEventListener('change', onFilter);
    const tbody = h('tbody');
    const count = h('p', { id: 'runs-count', class: 'muted', 'aria-live': 'polite' }, 'Loading…');
    main.append(
      title('Runs'),
      h('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
        h('label', { for: 'filter-state' }, 'State'), stateSel,
        h('label', { class: 'check' }, mine, ' Mine only')),
      count,
      h('div', { class: 'scroll' }, h('table', { id: 'runs', class: 'data' },
        h('thead', null, h('tr', null,
          ['Run', 'State', 'Owner', 'Script', 'Sweep', 'Parameters', 'Attempt', 'Worker', 'Created', 'Updated']
            .map((c) => h('th', { scope: 'col' }, c)))),
        tbody)));

    let total = 0;
    const showCount = () => {
      const shown = tbody.rows.length;
      count.textContent = shown === 0 ? 'No runs.' : `${shown} shown of ${Math.max(total, shown)}.`;
    };
    const matches = (r) => (!stateFilter || r.state === stateFilter) && (!mineOnly || r.owner === me.user);
    const rowOf = (id) => tbody.querySelector(`tr[data-run-id="${CSS.escape(id)}"]`);
    const refresh = refresher(v, (id, r) => {
      const tr = rowOf(id);
      if (!r) { if (tr) { tr.remove(); showCount(); } return; }
      if (tr) updateRunRow(tr, r);
      else if (matches(r)) { tbody.prepend(runRow(r)); total++; showCount(); }
    });

    // Subscribe before listing so that no change falls between the list and the stream.
    let loaded = false;
    const early = new Set();
    stream(v, '/api/v1/events', {
      task: (d) => {
        if (!d || !d.id) return;
        if (!loaded) { early.add(d.id); return; }
        // An unknown run that cannot match the state filter is not worth a request.
        if (!rowOf(d.id) && stateFilter && d.to && d.to !== stateFilter) return;
        refresh(d.id);
      },
    });
    const p = new URLSearchParams({ limit: '100' });
    if (stateFilter) p.set('state', stateFilter);
    if (mineOnly) p.set('mine', 'true');
    const data = await api(`/api/v1/runs?${p}`);
    if (!v.alive) return;
    total = data.total || 0;
    tbody.append(...(data.runs || []).map(runRow));
    loaded = true;
    showCount();
    early.forEach(refresh);
  }

  // ---------------------------------------------------------------- charts

  function uPlotReady() { return typeof window.uPlot === 'function'; }

  function chartWidth(el) { return Math.max(240, Math.floor(el.clientWidth || 300) - 4); }

  // A run's learning curves: one uPlot chart per metric name, x = step/episode when the point has
  // it, else the point's index. The points of a later attempt replace those of an earlier one.
  class Curves {
    constructor(v, container) {
      this.v = v;
      this.container = container;
      this.charts = new Map(); // name -> {el, plot, xs, ys}
      this.attempt = null;
      this.count = 0;
      this.drawn = 0;
      this.xLabel = null;
      this.timer = null;
      container.dataset.points = '0';
      this.empty = h('p', { class: 'muted empty' }, 'No metric points yet.');
      container.append(this.empty);
      const onResize = () => this.resize();
      window.addEventListener('resize', onResize);
      v.onDispose(() => {
        window.removeEventListener('resize', onResize);
        clearTimeout(this.timer);
        for (const c of this.charts.values()) if (c.plot) c.plot.destroy();
      });
    }

    add(point) {
      const values = (point && point.values) || {};
      const attempt = point.attempt ?? 1;
      if (this.attempt !== null && attempt > this.attempt) this.reset();
      else if (this.attempt !== null && attempt < this.attempt) return;
      this.attempt = attempt;
      const xKey = X_KEYS.find((k) => typeof values[k] === 'number');
      const x = xKey ? values[xKey] : this.count;
      if (!this.xLabel) this.xLabel = xKey || 'point';
      this.count++;
      for (const [name, y] of Object.entries(values)) {
        if (X_KEYS.includes(name) || typeof y !== 'number' || !Number.isFinite(y)) continue;
        const c = this.charts.get(name) || this.create(name);
        // Keep x ascending (uPlot needs it); points come in order, so this is almost always a push.
        let i = c.xs.length;
        while (i > 0 && c.xs[i - 1] > x) i--;
        c.xs.splice(i, 0, x);
        c.ys.splice(i, 0, y);
      }
      this.schedule();
    }

    reset() {
      for (const c of this.charts.values()) { c.xs.length = 0; c.ys.length = 0; }
      this.count = 0;
      this.schedule();
    }

    create(name) {
      this.empty.remove();
      const el = h('figure', { class: 'chart', 'data-metric': name },
        h('figcaption', { class: 'sr-only' }, `${name} by ${this.xLabel}`));
      this.container.append(el);
      this.resize(); // the charts already drawn share their row with this one now
      const c = { el, plot: null, xs: [], ys: [] };
      this.charts.set(name, c);
      if (uPlotReady()) {
        const color = COLORS[(this.charts.size - 1) % COLORS.length];
        c.plot = new window.uPlot({
          title: name,
          width: chartWidth(el),
          height: 220,
          scales: { x: { time: false } },
          axes: [{ label: this.xLabel }, {}],
          series: [{ label: this.xLabel }, { label: name, stroke: color, width: 2, spanGaps: true, points: { show: false } }],
        }, [c.xs, c.ys], el);
      }
      return c;
    }

    schedule() {
      if (this.timer) return;
      this.timer = setTimeout(() => {
        this.timer = null;
        if (!this.v.alive) return;
        for (const c of this.charts.values()) if (c.plot) c.plot.setData([c.xs, c.ys]);
        this.drawn = this.count;
        this.container.dataset.points = String(this.drawn);
        this.container.dataset.attempt = String(this.attempt ?? '');
      }, 80);
    }

    resize() {
      for (const c of this.charts.values()) if (c.plot) c.plot.setSize({ width: chartWidth(c.el), height: 220 });
    }
  }

  // ---------------------------------------------------------------- #/run/<id>

  async function viewRun(v, main, id) {
    let run;
    try {
      run = await api(`/api/v1/runs/${enc(id)}`);
    } catch (e) {
      if (e.status === 404 && v.alive) {
        main.append(title('Run not found'), h('p', null, `There is no run ${id}. `, h('a', { href: '#/runs' }, 'Back to the runs.')));
        return;
      }
      throw e;
    }
    if (!v.alive) return;

    const stateEl = h('span', { id: 'state' });
    const cancel = h('button', { type: 'button', id: 'cancel', class: 'danger' }, 'Cancel run');
    const summary = h('dl', { id: 'summary', class: 'facts' });
    const finals = h('dl', { id: 'final-metrics', class: 'facts' });
    const why = h('div', { id: 'why' });
    const whySection = section('Why it waits', 'why', why);
    const params = h('tbody');
    const attempts = h('tbody');
    const artifacts = h('ul', { id: 'artifacts', class: 'plain' });
    const history = h('tbody');
    const chart = h('div', { id: 'chart', class: 'charts', 'data-points': '0' });
    const log = h('pre', { id: 'log', class: 'log', tabindex: '0', 'aria-label': 'Log', 'data-lines': '0' });
    const follow = h('input', { type: 'checkbox', id: 'follow', checked: true });
    const logState = h('span', { id: 'log-state', class: 'muted' }, 'connecting…');

    main.append(
      h('div', { class: 'run-head' },
        title(`Run ${run.id}`), stateEl, cancel),
      h('div', { class: 'run-grid' },
        h('div', { class: 'col' },
          section('Summary', 'summary', summary, finals),
          whySection,
          section('Parameters', 'params', h('div', { class: 'scroll' },
            h('table', { id: 'params', class: 'data compact' },
              h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Value'))),
              params)))),
        h('div', { class: 'col wide' },
          section('Learning curves', 'curves', chart),
          section('Log', 'log',
            h('div', { class: 'log-bar' }, h('label', { class: 'check' }, follow, ' Follow'), logState),
            log))),
      section('Provenance', 'attempts', h('div', { class: 'scroll' },
        h('table', { id: 'attempts', class: 'data compact' },
          h('thead', null, h('tr', null,
            ['Attempt', 'Worker', 'Host', 'Script SHA-256', 'Git commit', 'Python', 'GPUs'].map((c) => h('th', { scope: 'col' }, c)))),
          attempts))),
      section('Artifacts', 'artifacts', artifacts),
      section('History', 'history', h('div', { class: 'scroll' },
        h('table', { id: 'history', class: 'data compact' },
          h('thead', null, h('tr', null,
            ['At', 'From', 'To', 'Worker', 'Reason'].map((c) => h('th', { scope: 'col' }, c)))),
          history))));

    const fact = (dl, k, ...val) => add(dl, [h('dt', null, k), h('dd', null, ...val)]);

    let lastState = null;
    function render(r) {
      run = r;
      stateEl.replaceChildren(stateBadge(r.state, { 'data-state': r.state }));
      stateEl.dataset.state = r.state;
      cancel.hidden = TERMINAL.has(r.state);
      summary.replaceChildren();
      fact(summary, 'Owner', r.owner || '—');
      fact(summary, 'Script', r.script || '—');
      fact(summary, 'Sweep', sweepLink(r.sweep));
      fact(summary, 'Attempt', `${r.attempt ?? 0} of ${r.maxAttempts ?? '?'}`);
      fact(summary, 'Worker', r.workerId || '—', r.gpuIds && r.gpuIds.length ? ` (GPU ${r.gpuIds.join(', ')})` : '');
      fact(summary, 'GPUs', String(r.gpus ?? 0));
      fact(summary, 'Priority', String(r.priority ?? 0));
      if (r.exitCode != null) fact(summary, 'Exit code', String(r.exitCode));
      if (r.error) fact(summary, 'Error', h('span', { class: 'bad' }, r.error));
      if (r.reason) fact(summary, 'Reason', r.reason);
      if (r.cancelRequested && !TERMINAL.has(r.state)) fact(summary, 'Cancel', 'requested');
      fact(summary, 'Created', fmtTime(r.createdAt));
      fact(summary, 'Updated', fmtTime(r.updatedAt));
      if (r.logLines != null && r.logLines >= 0) fact(summary, 'Log lines', String(r.logLines));
      finals.replaceChildren();
      for (const [k, val] of Object.entries(r.finalMetrics || {})) fact(finals, k, fmtValue(val));
      params.replaceChildren(...Object.entries(r.parameters || {}).map(([k, val]) =>
        h('tr', { 'data-param': k }, h('th', { scope: 'row' }, k), h('td', null, fmtValue(val)))));
      if (!params.rows.length) params.append(h('tr', null, h('td', { colspan: '2', class: 'muted' }, 'None.')));
      history.replaceChildren(...(r.history || []).map((t) => h('tr', null,
        h('td', null, fmtTime(t.at)), h('td', null, t.from || '—'), h('td', null, t.to || '—'),
        h('td', null, t.workerId || '—'), h('td', null, t.reason || ''))));
      whySection.hidden = r.state !== 'QUEUED';
      if (r.state === 'QUEUED') loadWhy();
      if (r.state !== lastState) {
        if (lastState !== null) { loadAttempts(); loadRunArtifacts(); }
        lastState = r.state;
      }
    }

    async function loadWhy() {
      try {
        const w = await api(`/api/v1/runs/${enc(id)}/why`);
        if (!v.alive) return;
        why.replaceChildren(
          h('p', null, h('strong', { 'data-code': w.code }, w.code), ' ', w.message || '',
            w.position != null ? ` (position ${w.position} in the queue)` : ''),
          (w.reasons && w.reasons.length)
            ? h('ul', { class: 'reasons' }, w.reasons.map((x) => h('li', { 'data-code': x.code }, h('code', null, x.code), ' ', x.message || '')))
            : null);
      } catch (e) { failed(v, e); }
    }

    async function loadAttempts() {
      try {
        const a = await api(`/api/v1/runs/${enc(id)}/attempts`);
        if (!v.alive) return;
        const rows = (a.attempts || []).map((p) => h('tr', null,
          h('td', { class: 'num' }, fmtValue(p.attempt)),
          h('td', null, p.workerId || p.worker || '—'),
          h('td', null, p.host || p.hostname || '—'),
          h('td', { class: 'mono', title: [p.scriptFile, p.scriptSha256].filter(Boolean).join(' ') }, (p.scriptSha256 || '—').slice(0, 16)),
          h('td', { class: 'mono' }, p.gitCommit ? `${p.gitCommit.slice(0, 12)}${p.gitDirty ? ' (dirty)' : ''}` : '—'),
          h('td', null, p.interpreterVersion ? `${p.interpreter || 'python'} ${p.interpreterVersion}` : (p.interpreter || p.python || '—')),
          h('td', null, (p.gpus || []).map((g) => typeof g === 'object' ? `${g.index ?? ''} ${g.name || ''} ${g.uuid || ''}`.trim() : String(g)).join(', ') || '—')));
        attempts.replaceChildren(...rows);
        if (!rows.length) attempts.append(h('tr', null, h('td', { colspan: '7', class: 'muted' }, 'No attempt started yet.')));
      } catch (e) { failed(v, e); }
    }

    // The list is drawn again only when it changed: drawing takes the focus from its buttons.
    let artifactsShown = null;
    async function loadArtifacts() {
      try {
        const a = await api(`/api/v1/runs/${enc(id)}/artifacts`);
        if (!v.alive) return null;
        const list = a.artifacts || [];
        const shown = JSON.stringify(list.map((x) => [x.key, x.size]));
        if (shown === artifactsShown) return list;
        artifactsShown = shown;
        artifacts.replaceChildren(...list.map((x) => {
          const btn = h('button', { type: 'button', class: 'link', 'data-key': x.key }, x.path || x.key);
          btn.addEventListener('click', () => download(x, btn));
          return h('li', { 'data-artifact-key': x.key },
            btn, ' ', h('span', { class: 'muted' },
              `${x.kind || ''} · attempt ${x.attempt ?? '?'} · ${fmtBytes(x.size)}${x.checkpointId ? ` · ${x.checkpointId}` : ''}`));
        }));
        if (!artifacts.children.length) artifacts.append(h('li', { class: 'muted' }, 'None yet.'));
        return list;
      } catch (e) { failed(v, e); return null; }
    }

    // An ended run's last outputs and its log are stored after its end is recorded (by the worker
    // and the master, each in its own time, and never without an artifact store): the list is read
    // again until both are in it, at growing intervals, for about a minute at most.
    let awaitingArtifacts = false;
    function loadRunArtifacts() {
      if (!TERMINAL.has(run.state)) { loadArtifacts(); return; }
      if (awaitingArtifacts) return;
      awaitingArtifacts = true;
      let wait = 500;
      const poll = async () => {
        const list = await loadArtifacts();
        if (!v.alive) return;
        const attempt = run.attempt ?? 0;
        const whole = attempt === 0 || (list && list.some((x) => x.kind === 'LOG')
          && list.some((x) => x.kind === 'OUTPUT' && x.attempt === attempt));
        if (!list || whole || wait > 32000) { awaitingArtifacts = false; return; }
        const t = setTimeout(poll, wait);
        v.onDispose(() => clearTimeout(t));
        wait *= 2;
      };
      poll();
    }

    async function download(x, btn) {
      btn.disabled = true;
      try {
        const res = await api(`/api/v1/runs/${enc(id)}/artifacts/file?key=${enc(x.key)}`, { raw: true });
        const blob = await res.blob();
        const url = URL.createObjectURL(blob);
        const a = h('a', { href: url, download: (x.path || x.key || 'artifact').split('/').pop(), hidden: true });
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 30000);
      } catch (e) {
        failed(v, e);
      } finally {
        btn.disabled = false;
      }
    }

    cancel.addEventListener('click', async () => {
      cancel.disabled = true;
      clearError();
      try {
        const res = await api(`/api/v1/runs/${enc(id)}/cancel`, { method: 'POST' });
        if (!v.alive) return;
        notice(res && res.cancelled ? `Cancel requested for ${id}.` : `${id} had already ended.`);
        refresh(id);
      } catch (e) {
        failed(v, e);
      } finally {
        cancel.disabled = false;
      }
    });

    const refresh = refresher(v, (_, r) => { if (r) render(r); });
    stream(v, '/api/v1/events', { task: (d) => { if (d && d.id === id) refresh(id); } });

    // The log, live: every line so far, then new ones, then `end`.
    let lines = 0;
    let logAttempt = null;
    const atBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight < 24;
    log.addEventListener('scroll', () => { follow.checked = atBottom(); });
    follow.addEventListener('change', () => { if (follow.checked) log.scrollTop = log.scrollHeight; });
    const logLine = (cls, text) => {
      log.append(h('span', { class: cls }, text, '\n'));
      while (log.childElementCount > LOG_KEEP) log.firstElementChild.remove();
      if (follow.checked) log.scrollTop = log.scrollHeight;
    };
    stream(v, `/api/v1/runs/${enc(id)}/log/stream`, {
      open: () => { logState.textContent = 'live'; },
      line: (d) => {
        if (logAttempt !== null && d.attempt !== logAttempt) logLine('sep', `── attempt ${d.attempt} ──`);
        logAttempt = d.attempt;
        logLine(d.stream === 'STDERR' ? 'err' : 'out', d.text ?? '');
        lines++;
        log.dataset.lines = String(lines);
      },
      end: (d, e, es) => {
        es.close();
        logLine('sep', `── ended: ${d.state || '?'}${d.complete === false ? ' (log incomplete)' : ''}${d.note ? ` — ${d.note}` : ''} ──`);
        log.dataset.ended = 'true';
        logState.textContent = 'ended';
        refresh(id);
      },
      reconnecting: () => { if (log.dataset.ended !== 'true') logState.textContent = 'reconnecting…'; },
      closed: () => { logState.textContent = 'disconnected'; },
    });

    // The curves, live.
    const curves = new Curves(v, chart);
    stream(v, `/api/v1/runs/${enc(id)}/metrics/stream`, {
      metric: (d) => curves.add(d),
      end: (d, e, es) => { es.close(); chart.dataset.ended = 'true'; },
    });

    render(run);
    loadAttempts();
    loadRunArtifacts();
    // The reasons a run waits change without an event of its own.
    v.every(5000, () => { if (run.state === 'QUEUED') loadWhy(); });
  }

  // ---------------------------------------------------------------- #/sweeps

  async function viewSweeps(v, main, q) {
    const mineOnly = q.get('mine') === 'true';
    const mine = h('input', { type: 'checkbox', id: 'filter-mine', checked: mineOnly });
    mine.addEventListener('change', () => { location.hash = mine.checked ? '#/sweeps?mine=true' : '#/sweeps'; });
    const tbody = h('tbody');
    const count = h('p', { id: 'sweeps-count', class: 'muted' }, 'Loading…');
    main.append(title('Sweeps'),
      h('form', { class: 'filters', onsubmit: (e) => e.preventDefault() }, h('label', { class: 'check' }, mine, ' Mine only')),
      count,
      h('div', { class: 'scroll' }, h('table', { id: 'sweeps', class: 'data' },
        h('thead', null, h('tr', null, ['Sweep', 'Name', 'Owner', 'Created', 'Runs', 'Grid'].map((c) => h('th', { scope: 'col' }, c)))),
        tbody)));
    const p = new URLSearchParams({ limit: '100' });
    if (mineOnly) p.set('mine', 'true');
    const data = await api(`/api/v1/sweeps?${p}`);
    if (!v.alive) return;
    tbody.append(...(data.sweeps || []).map((s) => h('tr', { 'data-sweep-id': s.id },
      h('th', { scope: 'row' }, sweepLink(s.id)),
      h('td', null, s.name || '—'),
      h('td', null, s.owner || '—'),
      h('td', null, fmtTime(s.createdAt)),
      h('td', { class: 'num' }, String((s.runIds || s.runs || []).length)),
      h('td', { class: 'params' }, s.grid ? Object.entries(s.grid).map(([k, vals]) => `${k}: ${(vals || []).map(fmtValue).join(', ')}`).join('; ') : '—'))));
    count.textContent = tbody.rows.length ? `${tbody.rows.length} shown of ${data.total ?? tbody.rows.length}.` : 'No sweeps.';
  }

  // ---------------------------------------------------------------- #/sweep/<id>

  async function viewSweep(v, main, id, q) {
    let sweep;
    try {
      sweep = await api(`/api/v1/sweeps/${enc(id)}`);
    } catch (e) {
      if (e.status === 404 && v.alive) {
        main.append(title('Sweep not found'), h('p', null, `There is no sweep ${id}. `, h('a', { href: '#/sweeps' }, 'Back to the sweeps.')));
        return;
      }
      throw e;
    }
    if (!v.alive) return;
    const runIds = sweep.runIds || (sweep.runs || []).map((r) => r.id);
    let metric = q.get('metric') || '';
    const higher = q.get('higher') !== 'false';

    const metricSel = h('select', { id: 'metric', name: 'metric' });
    const higherBox = h('input', { type: 'checkbox', id: 'higher', checked: higher });
    const go = () => {
      const p = new URLSearchParams();
      if (metricSel.value) p.set('metric', metricSel.value);
      if (!higherBox.checked) p.set('higher', 'false');
      location.hash = `#/sweep/${enc(id)}?${p}`;
    };
    metricSel.addEventListener('change', go);
    higherBox.addEventListener('change', go);
    const chart = h('div', { id: 'chart', class: 'charts single', 'data-points': '0', 'data-series': '0' });
    const compareHead = h('thead');
    const compareBody = h('tbody');
    const codeNote = h('p', { id: 'code-note', class: 'warn', hidden: true },
      'The runs did not all run the same code (their scripts\u2019 SHA-256 differ).');
    const constants = h('p', { id: 'constants', class: 'muted' });
    main.append(
      title(`Sweep ${sweep.id}${sweep.name ? ` — ${sweep.name}` : ''}`),
      h('p', { class: 'muted' }, `${runIds.length} runs · owner ${sweep.owner || '—'} · created ${fmtTime(sweep.createdAt)}`),
      h('form', { class: 'filters', onsubmit: (e) => e.preventDefault() },
        h('label', { for: 'metric' }, 'Metric'), metricSel,
        h('label', { class: 'check' }, higherBox, ' Higher is better')),
      section('Curves', 'curves', chart),
      section('Compare', 'compare', constants, codeNote, h('div', { class: 'scroll' },
        h('table', { id: 'compare', class: 'data' }, compareHead, compareBody))));

    const names = new Set();
    const points = new Map(); // run id -> metric points
    const states = new Map();
    let cmp = null;
    let plot = null;
    let plotKey = '';

    function fillMetricOptions() {
      const all = [...names].sort();
      if (metric && !all.includes(metric)) all.unshift(metric);
      if (metricSel.options.length === all.length && [...metricSel.options].every((o, i) => o.value === all[i])) return;
      metricSel.replaceChildren(...(all.length ? all : ['']).map((n) =>
        h('option', { value: n, selected: n === metric }, n || '(no metrics yet)')));
    }

    function learn(valuesObj) {
      let added = false;
      for (const [k, val] of Object.entries(valuesObj || {})) {
        if (X_KEYS.includes(k) || typeof val !== 'number') continue;
        if (!names.has(k)) { names.add(k); added = true; }
      }
      if (added) {
        if (!metric) {
          metric = names.has('reward') ? 'reward' : [...names].sort()[0];
          loadCompare();
        }
        fillMetricOptions();
      }
    }

    const varying = () => (cmp && cmp.varying) || [];
    const paramsOf = (rid) => {
      const r = cmp && (cmp.runs || []).find((x) => x.id === rid);
      return r ? r.parameters : ((sweep.runs || []).find((x) => x.id === rid) || {}).parameters;
    };
    const label = (rid) => {
      const p = fmtParams(paramsOf(rid), varying());
      return p ? `${rid} ${p}` : rid;
    };

    function draw() {
      if (!uPlotReady()) {
        chart.textContent = 'The chart library did not load.';
        return;
      }
      const tables = [];
      let total = 0;
      for (const rid of runIds) {
        const xs = [];
        const ys = [];
        let i = 0;
        let lastAttempt = null;
        for (const pt of points.get(rid) || []) {
          if (lastAttempt !== null && pt.attempt !== lastAttempt) { xs.length = 0; ys.length = 0; i = 0; }
          lastAttempt = pt.attempt;
          const vals = pt.values || {};
          const xKey = X_KEYS.find((k) => typeof vals[k] === 'number');
          const x = xKey ? vals[xKey] : i;
          i++;
          if (typeof vals[metric] !== 'number' || !Number.isFinite(vals[metric])) continue;
          let j = xs.length;
          while (j > 0 && xs[j - 1] > x) j--;
          if (j > 0 && xs[j - 1] === x) { ys[j - 1] = vals[metric]; continue; }
          xs.splice(j, 0, x);
          ys.splice(j, 0, vals[metric]);
        }
        total += xs.length;
        tables.push([xs, ys]);
      }
      const data = tables.length ? window.uPlot.join(tables) : [[]];
      const key = `${metric}|${runIds.map(label).join('|')}`;
      if (!plot || key !== plotKey) {
        if (plot) plot.destroy();
        chart.replaceChildren();
        plotKey = key;
        plot = new window.uPlot({
          title: metric || 'no metric yet',
          width: chartWidth(chart),
          height: 300,
          scales: { x: { time: false } },
          axes: [{ label: 'step' }, { label: metric }],
          series: [{ label: 'step' }, ...runIds.map((rid, k) => ({
            label: label(rid), stroke: COLORS[k % COLORS.length], width: 2, spanGaps: true, points: { show: false },
          }))],
        }, data, chart);
      } else {
        plot.setData(data);
      }
      chart.dataset.series = String(runIds.length);
      chart.dataset.points = String(total);
      chart.dataset.metric = metric;
    }

    async function loadCompare() {
      const p = new URLSearchParams();
      if (metric) { p.set('metric', metric); p.set('higher', String(higher)); }
      const c = await api(`/api/v1/sweeps/${enc(id)}/compare${metric ? `?${p}` : ''}`);
      if (!v.alive) return;
      cmp = c;
      for (const r of c.runs || []) { learn(r.finalMetrics); states.set(r.id, r.state); }
      renderCompare();
      draw();
    }

    function renderCompare() {
      const vary = varying();
      const allParams = [];
      for (const r of cmp.runs || []) for (const k of Object.keys(r.parameters || {})) if (!allParams.includes(k)) allParams.push(k);
      const fixed = allParams.filter((k) => !vary.includes(k));
      const first = (cmp.runs || [])[0];
      constants.textContent = fixed.length && first ? `Same in every run: ${fmtParams(first.parameters, fixed)}` : '';
      codeNote.hidden = !cmp.codeDiffering;
      const metricCols = [...new Set((cmp.runs || []).flatMap((r) => Object.keys(r.finalMetrics || {})))]
        .filter((k) => k !== metric).sort();
      compareHead.replaceChildren(h('tr', null,
        h('th', { scope: 'col' }, 'Run'), h('th', { scope: 'col' }, 'State'),
        vary.map((k) => h('th', { scope: 'col', class: 'varying', 'data-param': k }, k)),
        metric ? h('th', { scope: 'col', class: 'metric' }, `${metric} (${higher ? 'higher' : 'lower'} is better)`) : null,
        metricCols.map((k) => h('th', { scope: 'col' }, k)),
        h('th', { scope: 'col' }, 'Code')));
      compareBody.replaceChildren(...(cmp.runs || []).map((r) => {
        const best = cmp.best != null && r.id === cmp.best;
        return h('tr', { 'data-run-id': r.id, class: best ? 'best' : null, 'data-best': best ? 'true' : null },
          h('th', { scope: 'row' }, runLink(r.id), best ? h('span', { class: 'best-mark', title: 'best run' }, ' ★ best') : null),
          h('td', { 'data-state': r.state }, stateBadge(r.state)),
          vary.map((k) => h('td', { class: 'varying', 'data-param': k }, fmtValue((r.parameters || {})[k]))),
          metric ? h('td', { class: 'metric num' }, fmtValue((r.finalMetrics || {})[metric])) : null,
          metricCols.map((k) => h('td', { class: 'num' }, fmtValue((r.finalMetrics || {})[k]))),
          h('td', { class: 'mono', title: r.codeSha256 || '' }, (r.codeSha256 || '—').slice(0, 12)));
      }));
    }

    // Metric points: fetched for every run, then again every 2 s for the runs still going.
    async function loadPoints(rid) {
      try {
        const m = await api(`/api/v1/runs/${enc(rid)}/metrics`);
        if (!v.alive) return;
        const pts = m.points || [];
        points.set(rid, pts);
        for (const pt of pts) learn(pt.values);
      } catch (e) {
        if (e.status !== 404) throw e;
      }
    }

    async function loadAllPoints(onlyActive) {
      const ids = runIds.filter((rid) => !onlyActive || !TERMINAL.has(states.get(rid)) || !points.has(rid));
      for (let i = 0; i < ids.length; i += 4) {
        await Promise.all(ids.slice(i, i + 4).map(loadPoints));
        if (!v.alive) return;
      }
      draw();
    }

    for (const r of sweep.runs || []) states.set(r.id, r.state);
    fillMetricOptions();
    await loadCompare();
    await loadAllPoints(false);
    if (!v.alive) return;
    fillMetricOptions();

    let busy = false;
    v.every(2000, async () => {
      if (busy || runIds.every((rid) => TERMINAL.has(states.get(rid)))) return;
      busy = true;
      try { await loadAllPoints(true); } catch (e) { failed(v, e); } finally { busy = false; }
    });
    let compareTimer = null;
    v.onDispose(() => clearTimeout(compareTimer));
    const member = new Set(runIds);
    stream(v, '/api/v1/events', {
      task: (d) => {
        if (!d || !member.has(d.id)) return;
        if (d.to) states.set(d.id, d.to);
        clearTimeout(compareTimer);
        compareTimer = setTimeout(() => {
          loadCompare().then(() => loadAllPoints(true)).catch((e) => failed(v, e));
        }, 300);
      },
    });
    const onResize = () => { if (plot) plot.setSize({ width: chartWidth(chart), height: 300 }); };
    window.addEventListener('resize', onResize);
    v.onDispose(() => { window.removeEventListener('resize', onResize); if (plot) plot.destroy(); });
  }

  // ---------------------------------------------------------------- #/queue

  async function viewQueue(v, main) {
    const tbody = h('tbody');
    const count = h('p', { id: 'queue-count', class: 'muted', 'aria-live': 'polite' }, 'Loading…');
    main.append(title('Queue'), count,
      h('div', { class: 'scroll' }, h('table', { id: 'queue', class: 'data' },
        h('thead', null, h('tr', null,
          ['#', 'Run', 'Owner', 'Script', 'Priority', 'GPUs', 'Waiting since', 'Why'].map((c) => h('th', { scope: 'col' }, c)))),
        tbody)));
    async function load() {
      const data = await api('/api/v1/queue?limit=200');
      if (!v.alive) return;
      tbody.replaceChildren(...(data.runs || []).map((r, i) => {
        const w = r.why || {};
        return h('tr', { 'data-run-id': r.id },
          h('td', { class: 'num' }, String(w.position ?? i + 1)),
          h('th', { scope: 'row' }, runLink(r.id)),
          h('td', null, r.owner || '—'),
          h('td', null, r.script || '—'),
          h('td', { class: 'num' }, String(r.priority ?? 0)),
          h('td', { class: 'num' }, String(r.gpus ?? 0)),
          h('td', null, fmtTime(r.createdAt)),
          h('td', { class: 'why', 'data-code': w.code || '' },
            h('strong', null, w.code || '—'), w.message ? ` ${w.message}` : '',
            (w.reasons && w.reasons.length)
              ? h('ul', { class: 'reasons' }, w.reasons.map((x) => h('li', { 'data-code': x.code }, h('code', null, x.code), ' ', x.message || '')))
              : null));
      }));
      count.textContent = data.total ? `${data.total} waiting${data.total > tbody.rows.length ? `, first ${tbody.rows.length} shown` : ''}.` : 'Nothing waits.';
    }
    let timer = null;
    v.onDispose(() => clearTimeout(timer));
    const later = () => {
      clearTimeout(timer);
      timer = setTimeout(() => load().catch((e) => failed(v, e)), 500);
    };
    stream(v, '/api/v1/events', { task: later });
    v.every(10000, later); // reasons change without events too
    await load();
  }

  // ---------------------------------------------------------------- #/workers

  async function viewWorkers(v, main) {
    const board = h('div', { id: 'workers', class: 'boards' });
    const count = h('p', { id: 'workers-count', class: 'muted' }, 'Loading…');
    main.append(title('Workers'), count, board);
    async function load() {
      const data = await api('/api/v1/workers');
      if (!v.alive) return;
      const workers = data.workers || [];
      board.replaceChildren(...workers.map((w) => {
        const gpus = w.gpus || [];
        return h('section', { class: 'panel worker', 'data-worker-id': w.id, 'aria-label': `worker ${w.id}` },
          h('h2', null, w.id, ' ', h('span', { class: `badge worker-${w.state || 'UNKNOWN'}` }, w.state || '—')),
          h('p', { class: 'muted' },
            `CPU slots ${w.freeCpuSlots ?? '?'} free of ${w.cpuSlots ?? '?'} · memory ${fmtBytes(w.memoryBytes)} · heartbeat ${fmtAge(w.lastHeartbeat)}`),
          w.labels && Object.keys(w.labels).length
            ? h('p', { class: 'labels' }, Object.entries(w.labels).map(([k, val]) => h('span', { class: 'tag' }, `${k}=${val}`)))
            : null,
          gpus.length
            ? h('ul', { class: 'gpus plain' }, gpus.map((g) => {
              const used = g.memoryUsedBytes;
              const tot = g.memoryTotalBytes;
              return h('li', { class: `gpu${g.run ? ' busy' : ''}`, 'data-gpu-index': g.index, 'data-run-id': g.run || null },
                h('div', { class: 'gpu-head' }, h('strong', null, `GPU ${g.index}`), ' ', h('span', { class: 'muted' }, g.name || '')),
                (used != null && tot)
                  ? h('div', null, h('meter', { min: '0', max: String(tot), value: String(used), 'aria-label': `GPU ${g.index} memory` }),
                    ` ${fmtBytes(used)} / ${fmtBytes(tot)}`)
                  : h('div', { class: 'muted' }, tot ? `memory ${fmtBytes(tot)}` : 'memory —'),
                h('div', null, g.utilizationPercent != null ? `utilisation ${Math.round(g.utilizationPercent)} %` : h('span', { class: 'muted' }, 'utilisation —')),
                h('div', null, g.run ? ['runs ', runLink(g.run)] : h('span', { class: 'muted' }, 'free')));
            }))
            : h('p', { class: 'muted' }, 'No GPUs.'),
          (w.runs && w.runs.length)
            ? h('p', null, 'Runs: ', w.runs.map((rid, i) => [i ? ', ' : '', runLink(rid)]))
            : h('p', { class: 'muted' }, 'No runs.'));
      }));
      count.textContent = workers.length ? `${workers.length} worker${workers.length === 1 ? '' : 's'}.` : 'No workers.';
    }
    let busy = false;
    v.every(5000, async () => {
      if (busy) return;
      busy = true;
      try { await load(); } catch (e) { failed(v, e); } finally { busy = false; }
    });
    await load();
  }

  // ---------------------------------------------------------------- start

  function start() {
    $('#signout').addEventListener('click', () => signedOut('Signed out.'));
    $('#error-close').addEventListener('click', clearError);
    $('#skip').addEventListener('click', (e) => { e.preventDefault(); $('#main').focus(); });
    window.addEventListener('hashchange', route);
    if (!token) { showSignIn(); return; }
    api('/api/v1/me').then((m) => { me = m; signedIn(); }).catch((e) => {
      if (e.status === 401) return; // the sign-in form is up
      $('#main').replaceChildren(h('h1', null, 'The server did not answer'),
        h('p', null, e.message, ' '), h('button', { type: 'button', onclick: () => location.reload() }, 'Try again'));
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
