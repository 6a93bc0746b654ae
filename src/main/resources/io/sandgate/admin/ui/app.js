// The dashboard: plain DOM and inline SVG, no framework, no CDN. It reads the admin API with the
// token the user typed once, kept in sessionStorage (gone with the tab), and refreshes every two
// seconds. Every call carries the token in the Authorization header: there is no cookie a page
// elsewhere could ride on, so actions cannot be forged across sites; each asks for confirmation.
(function () {
  'use strict';
  var KEY = 'sandgate.admin.token';
  var SVG = 'http://www.w3.org/2000/svg';
  var COLOURS = ['#2f6fdb', '#e08a1e', '#2a9d6f', '#8e5bd6', '#c2497d', '#4b8ea8', '#7a7f2a', '#5c6470'];
  var EJECTED = '#b3261e';
  var base = location.pathname.replace(/\/ui\/.*$/, '');   // .../admin

  function token() { return sessionStorage.getItem(KEY); }

  function call(method, path, body) {
    var headers = { 'Authorization': 'Bearer ' + token() };
    if (body !== undefined) { headers['Content-Type'] = 'application/json'; }
    return fetch(base + path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) }).then(function (r) {
      if (r.status === 401) { sessionStorage.removeItem(KEY); show(); throw new Error('token refused'); }
      return r;
    });
  }

  function api(path) {
    return call('GET', path).then(function (r) {
      if (r.status === 404) { return null; }
      if (!r.ok) { throw new Error(path + ': ' + r.status); }
      return r.json();
    });
  }

  function notice(text, bad) {
    var box = document.getElementById('notice');
    box.textContent = text;
    box.className = bad ? 'bad' : 'good';
    box.hidden = false;
  }

  // An action: asks first, then calls, then says how it went (the error's own message on failure).
  function act(question, method, path, body) {
    if (!confirm(question)) { return Promise.resolve(false); }
    return call(method, path, body).then(function (r) {
      if (r.ok) { notice('Done: ' + question.replace(/\?$/, '')); return true; }
      return r.json().catch(function () { return {}; }).then(function (body) {
        notice('Refused (' + r.status + '): ' + (body.message || body.error || path), true);
        return false;
      });
    }).catch(function (e) { notice('Failed: ' + e.message, true); return false; })
      .then(function (done) { refresh(); return done; });
  }

  function cell(row, text) {
    var td = document.createElement('td');
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function button(parent, label, onClick) {
    var b = document.createElement('button');
    b.type = 'button';
    b.className = 'action';
    b.textContent = label;
    b.addEventListener('click', onClick);
    parent.appendChild(b);
  }

  function fill(id, items, render) {
    var body = document.querySelector('#' + id + ' tbody');
    body.replaceChildren();
    items.forEach(function (item) { var row = document.createElement('tr'); render(row, item); body.appendChild(row); });
  }

  // Routes: a server-side search by id prefix, a page at a time; the first page follows the table
  // live, pages asked for with "More" stay as they were read.
  var search = { prefix: '', next: null, pages: 0, items: [], seq: 0 };

  function routeRow(row, r) {
    row.dataset.sandbox = r.id;
    cell(row, r.id);
    cell(row, r.state || 'running');
    // A paused sandbox may have no target until it runs again.
    cell(row, (r.target || '') + (r.revokedBefore ? ' (access revoked ' + r.revokedBefore + ')' : ''));
    cell(row, r.generation ? 'watcher' : 'admin or Redis');
    var desktop = cell(row, '');
    if (r.desktop) {
      var link = document.createElement('a');
      // The gateway says where: the sandbox's own host in host mode, its path under the gateway's otherwise.
      link.href = r.desktop + 'vnc.html?autoconnect=true';
      link.target = '_blank';
      link.textContent = r.state === 'paused' ? 'Open desktop (wakes it)' : 'Open desktop';
      desktop.appendChild(link);
    }
    var actions = cell(row, '');
    var id = encodeURIComponent(r.id);
    button(actions, 'Revoke access', function () { act('Revoke every grant and session of sandbox ' + r.id + '?', 'POST', '/revoke/' + id); });
    button(actions, 'Delete route', function () { act('Delete the route of sandbox ' + r.id + '?', 'DELETE', '/routes/' + id); });
  }

  // A pending tool change: the server's own text, shown as text only. Approval names the digest
  // shown, so that a definition changed again since is not approved in its place.
  function pinRow(row, c) {
    cell(row, c.server);
    cell(row, c.tool);
    cell(row, c.kind);
    // The description at a glance, and the whole definitions the digest covers (title, schemas,
    // annotations): an approval approves all of it, so all of it is shown, as text only.
    var change = cell(row, (c.before ? String(c.before.description) : '(new tool)') + ' → ' + String(c.after.description));
    var details = document.createElement('details');
    var summary = document.createElement('summary');
    summary.textContent = 'whole definitions';
    details.appendChild(summary);
    [['before', c.before], ['after', c.after]].forEach(function (side) {
      var pre = document.createElement('pre');
      pre.textContent = side[0] + ': ' + (side[1] ? JSON.stringify(side[1].definition, null, 2) : '(none)');
      details.appendChild(pre);
    });
    change.appendChild(details);
    cell(row, c.since);
    var path = '/mcp/servers/' + encodeURIComponent(c.server) + '/tools/' + encodeURIComponent(c.tool);
    var actions = cell(row, '');
    button(actions, 'Approve', function () { act('Approve the served definition of tool ' + c.tool + ' on ' + c.server + '?', 'POST', path + '/approve', { digest: c.after.digest }); });
    button(actions, 'Reject', function () { act('Reject the served definition of tool ' + c.tool + ' on ' + c.server + '?', 'POST', path + '/reject', { digest: c.after.digest }); });
  }

  function searchRoutes(more) {
    var seq = ++search.seq;
    var query = '/search/routes?limit=50&prefix=' + encodeURIComponent(search.prefix) + (more ? '&cursor=' + encodeURIComponent(search.next) : '');
    return call('GET', query).then(function (r) {
      return r.json().then(function (body) { return { ok: r.ok, body: body }; });
    }).then(function (answer) {
      if (seq !== search.seq) { return; }    // typed on meanwhile: a later search answers
      if (!answer.ok) {
        fill('routes', [], null);
        document.getElementById('routes-count').textContent = answer.body.message || 'search refused';
        document.getElementById('routes-more').hidden = true;
        return;
      }
      search.items = more ? search.items.concat(answer.body.items) : answer.body.items;
      search.pages = more ? search.pages + 1 : 1;
      search.next = answer.body.next || null;
      fill('routes', search.items, routeRow);
      document.getElementById('routes-count').textContent = search.items.length + (search.next ? ' shown, more to see' : ' found');
      document.getElementById('routes-more').hidden = !search.next;
    }).catch(function (e) { document.getElementById('routes-count').textContent = 'search failed: ' + e.message; });
  }

  // Charts: one SVG per chart of the history, each series a path over the sample times; an egress
  // node's ejected samples are marked red. Data stay on the elements, for whoever inspects them.
  function chart(spec, times) {
    var width = 460, height = 150, left = 44, right = 8, top = 8, bottom = 22;
    var svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.id = 'chart-' + spec.id;
    var max = 0;
    spec.series.forEach(function (s) { s.values.forEach(function (v) { if (v !== null && v > max) { max = v; } }); });
    max = max > 0 ? max * 1.1 : 1;
    var n = times.length;
    function x(i) { return left + (n > 1 ? i * (width - left - right) / (n - 1) : 0); }
    function y(v) { return top + (height - top - bottom) * (1 - v / max); }
    var baseline = y(0);
    svg.dataset.baseline = baseline.toFixed(1);
    function line(x1, y1, x2, y2, cls) {
      var l = document.createElementNS(SVG, 'line');
      l.setAttribute('x1', x1); l.setAttribute('y1', y1); l.setAttribute('x2', x2); l.setAttribute('y2', y2);
      l.setAttribute('class', cls);
      svg.appendChild(l);
    }
    function text(tx, ty, content, anchor) {
      var t = document.createElementNS(SVG, 'text');
      t.setAttribute('x', tx); t.setAttribute('y', ty); t.setAttribute('text-anchor', anchor || 'start');
      t.textContent = content;
      svg.appendChild(t);
    }
    line(left, baseline, width - right, baseline, 'axis');
    line(left, top, left, baseline, 'axis');
    text(left - 4, top + 8, format(max) + (spec.unit ? ' ' + spec.unit : ''), 'end');
    text(left - 4, baseline, '0', 'end');
    if (n > 0) { text(width - right, height - 6, new Date(times[n - 1]).toLocaleTimeString(), 'end'); }
    if (n > 0) { text(left, height - 6, new Date(times[0]).toLocaleTimeString()); }
    spec.series.forEach(function (s, k) {
      var colour = COLOURS[k % COLOURS.length];
      var d = '', pen = 'M';
      s.values.forEach(function (v, i) {
        if (v === null) { pen = 'M'; return; }
        d += pen + x(i).toFixed(1) + ' ' + y(v).toFixed(1) + ' ';
        pen = 'L';
      });
      var path = document.createElementNS(SVG, 'path');
      path.setAttribute('d', d.trim());
      path.setAttribute('stroke', colour);
      path.setAttribute('class', 'series');
      path.dataset.series = s.name;
      path.dataset.values = JSON.stringify(s.values);
      svg.appendChild(path);
      // A value with no neighbour draws no line: a dot, so that a lone sample still shows.
      s.values.forEach(function (v, i) {
        if (v === null || (i > 0 && s.values[i - 1] !== null) || (i < n - 1 && s.values[i + 1] !== null)) { return; }
        var dot = document.createElementNS(SVG, 'circle');
        dot.setAttribute('cx', x(i).toFixed(1));
        dot.setAttribute('cy', y(v).toFixed(1));
        dot.setAttribute('r', 2);
        dot.setAttribute('fill', colour);
        svg.appendChild(dot);
      });
      (s.ejected || []).forEach(function (ejected, i) {
        if (!ejected || s.values[i] === null) { return; }
        var dot = document.createElementNS(SVG, 'circle');
        dot.setAttribute('cx', x(i).toFixed(1));
        dot.setAttribute('cy', y(s.values[i]).toFixed(1));
        dot.setAttribute('r', 3.5);
        dot.setAttribute('fill', EJECTED);
        dot.setAttribute('class', 'ejected');
        dot.dataset.series = s.name;
        svg.appendChild(dot);
      });
    });
    var figure = document.createElement('figure');
    var caption = document.createElement('figcaption');
    caption.textContent = spec.title;
    var legend = document.createElement('div');
    legend.className = 'legend';
    spec.series.forEach(function (s, k) {
      var item = document.createElement('span');
      var swatch = document.createElement('b');
      swatch.className = 'swatch c' + (k % COLOURS.length);
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(s.name));
      legend.appendChild(item);
    });
    if (spec.series.length === 0) { legend.textContent = 'nothing to show'; }
    figure.appendChild(caption);
    figure.appendChild(svg);
    figure.appendChild(legend);
    return figure;
  }

  function format(v) {
    return v >= 100 ? Math.round(v).toString() : v >= 10 ? v.toFixed(1) : v.toFixed(2);
  }

  function drawHistory(history) {
    var box = document.getElementById('charts');
    box.replaceChildren();
    if (!history) { return; }
    history.charts.forEach(function (spec) { box.appendChild(chart(spec, history.times)); });
    document.getElementById('history-span').textContent = history.times.length + (history.times.length === 1 ? ' sample' : ' samples') + ', one every ' + history.intervalMillis / 1000 + ' s';
  }

  function refresh() {
    if (search.pages <= 1) { searchRoutes(false); }
    api('/history').then(drawHistory);
    api('/ingress/sessions').then(function (sessions) {
      if (!sessions) return;
      document.getElementById('ingress-count').textContent = sessions.total + ' open';
      fill('ingress', sessions.items, function (row, s) { cell(row, s.sandbox); cell(row, s.webSockets); });
    });
    api('/mcp/sessions').then(function (sessions) {
      fill('mcp', sessions.items, function (row, s) {
        row.dataset.session = s.id;
        cell(row, s.id); cell(row, s.server); cell(row, s.protocolVersion || '');
        button(cell(row, ''), 'End session', function () { act('End MCP session ' + s.id + ' on every replica?', 'DELETE', '/mcp/sessions/' + encodeURIComponent(s.id)); });
      });
    });
    api('/mcp/tools/pending').then(function (pins) {
      var changes = [];
      Object.keys((pins && pins.servers) || {}).forEach(function (name) { changes = changes.concat(pins.servers[name].pending); });
      fill('pins', changes, pinRow);
    });
    api('/egress/pools').then(function (pools) {
      document.getElementById('egress-reload').hidden = pools === null;
      var box = document.getElementById('pools');
      box.replaceChildren();
      (pools || []).forEach(function (pool) {
        var title = document.createElement('h3');
        title.textContent = pool.name + ' (' + pool.region + ')' + (pool.panic ? ' PANIC' : '') + (pool.regionFailingOver ? ' failing over' : '');
        box.appendChild(title);
        var table = document.createElement('table');
        table.innerHTML = '<thead><tr><th>node</th><th>region</th><th>weight</th><th>state</th><th>jitter ms</th><th>success</th></tr></thead><tbody></tbody>';
        pool.nodes.forEach(function (n) {
          var row = document.createElement('tr');
          cell(row, n.id); cell(row, n.region); cell(row, Math.round(n.weight));
          var state = cell(row, n.ejected ? 'ejected (' + n.ejection + ')' : (n.recoveryShare < 1 ? 'recovering' : 'healthy'));
          state.className = n.ejected ? 'bad' : 'good';
          cell(row, n.jitterMs.toFixed(1)); cell(row, Math.round(n.successRate * 100) + ' %');
          table.tBodies[0].appendChild(row);
        });
        box.appendChild(table);
      });
    });
    document.getElementById('status').textContent = 'updated ' + new Date().toLocaleTimeString();
  }

  var timer = null;
  function show() {
    var signedIn = !!token();
    document.getElementById('login').hidden = signedIn;
    document.getElementById('views').hidden = !signedIn;
    if (signedIn && !timer) {
      refresh();
      timer = setInterval(function () { refresh(); }, 2000);
    }
    if (!signedIn && timer) { clearInterval(timer); timer = null; }
  }

  var typing = null;
  document.getElementById('route-search').addEventListener('input', function (e) {
    clearTimeout(typing);
    // One search when typing pauses, not one per keystroke.
    typing = setTimeout(function () { search.prefix = e.target.value.trim(); search.pages = 0; searchRoutes(false); }, 250);
  });
  document.getElementById('routes-more').addEventListener('click', function () { if (search.next) { searchRoutes(true); } });
  document.getElementById('egress-reload').addEventListener('click', function () {
    act('Reload egress routes, pools and credentials from the configuration?', 'POST', '/egress/reload');
  });
  document.getElementById('login').addEventListener('submit', function (e) {
    e.preventDefault();
    sessionStorage.setItem(KEY, document.getElementById('token').value);
    show();
  });
  show();
}());
