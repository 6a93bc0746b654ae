// The dashboard: plain DOM, no framework, no CDN. It reads the admin API with the token the user
// typed once, kept in sessionStorage (gone with the tab), and refreshes every two seconds.
(function () {
  'use strict';
  var KEY = 'sandgate.admin.token';
  var base = location.pathname.replace(/\/ui\/.*$/, '');   // .../admin
  var root = base.replace(/\/admin$/, '');                    // context path

  function token() { return sessionStorage.getItem(KEY); }

  function api(path) {
    return fetch(base + path, { headers: { 'Authorization': 'Bearer ' + token() } }).then(function (r) {
      if (r.status === 401) { sessionStorage.removeItem(KEY); show(); throw new Error('token refused'); }
      if (r.status === 404) { return null; }
      if (!r.ok) { throw new Error(path + ': ' + r.status); }
      return r.json();
    });
  }

  function cell(row, text) {
    var td = document.createElement('td');
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function fill(id, items, render) {
    var body = document.querySelector('#' + id + ' tbody');
    body.replaceChildren();
    items.forEach(function (item) { var row = document.createElement('tr'); render(row, item); body.appendChild(row); });
  }

  function refresh() {
    api('/routes?limit=1000').then(function (page) {
      document.getElementById('routes-count').textContent = page.total + ' routes';
      fill('routes', page.items, function (row, r) {
        cell(row, r.id);
        cell(row, r.target);
        cell(row, r.generation ? 'watcher' : 'admin or Redis');
        var link = document.createElement('a');
        link.href = root + '/vnc/' + encodeURIComponent(r.id) + '/vnc.html?autoconnect=true';
        link.target = '_blank';
        link.textContent = 'Open desktop';
        cell(row, '').appendChild(link);
      });
    });
    api('/ingress/sessions').then(function (sessions) {
      if (!sessions) return;
      document.getElementById('ingress-count').textContent = sessions.total + ' open';
      fill('ingress', sessions.items, function (row, s) { cell(row, s.sandbox); cell(row, s.webSockets); });
    });
    api('/mcp/sessions').then(function (sessions) {
      fill('mcp', sessions.items, function (row, s) { cell(row, s.id); cell(row, s.server); cell(row, s.protocolVersion || ''); });
    });
    api('/egress/pools').then(function (pools) {
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

  document.getElementById('login').addEventListener('submit', function (e) {
    e.preventDefault();
    sessionStorage.setItem(KEY, document.getElementById('token').value);
    show();
  });
  show();
}());
