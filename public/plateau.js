// Small progressive enhancements; the app works without them.

// Keep ECharts instances sized to their containers when the window changes size
// (charming draws the charts; ECharts itself does not watch its container).
window.addEventListener('resize', function () {
  if (!window.echarts) return;
  document.querySelectorAll('.chart').forEach(function (el) {
    var chart = window.echarts.getInstanceByDom(el);
    if (chart) chart.resize();
  });
});

// Drag and drop onto the import form's drop zone. Dropped files go into its file input.
// A dropped folder is walked (the browser's file-system entries), and its files are sent
// with their paths inside it when the form is submitted, as the folder picker sends them:
// the server groups them by folder (a sweep folder becomes an experiment).
var droppedFolder = null; // [{ file, path }] of the last folder dropped, until a new drop

// Every file below the entries, with its path (`top/sub/name`), in the order the browser
// lists them; the server sorts them itself.
function collectEntries(entries) {
  var out = [];
  function walk(entry) {
    if (entry.isFile) {
      return new Promise(function (resolve, reject) {
        entry.file(function (f) { out.push({ file: f, path: entry.fullPath.replace(/^\/+/, '') }); resolve(); }, reject);
      });
    }
    if (!entry.isDirectory) return Promise.resolve();
    var reader = entry.createReader();
    // readEntries answers in batches (100 in Chrome) until it answers none.
    function next() {
      return new Promise(function (resolve, reject) { reader.readEntries(resolve, reject); }).then(function (batch) {
        if (!batch.length) return;
        return Promise.all(batch.map(walk)).then(next);
      });
    }
    return next();
  }
  return Promise.all(entries.map(walk)).then(function () { return out; });
}
window.plateauCollectEntries = collectEntries;

function showDropped(zone, text) {
  var span = zone.querySelector('span');
  if (span) span.textContent = text;
}

function useFolder(zone, files) {
  droppedFolder = files;
  var input = zone.querySelector('input[type=file]');
  if (input) input.value = '';
  var tops = {};
  files.forEach(function (f) { tops[f.path.split('/')[0]] = true; });
  showDropped(zone, Object.keys(tops).join(', ') + ' (' + files.length + ' files)');
}
window.plateauUseFolder = function (files) {
  var zone = document.querySelector('.dropzone');
  if (zone) useFolder(zone, files);
};

document.addEventListener('dragover', function (e) {
  var zone = e.target.closest && e.target.closest('.dropzone');
  if (!zone) return;
  e.preventDefault();
  zone.classList.add('over');
});
document.addEventListener('dragleave', function (e) {
  var zone = e.target.closest && e.target.closest('.dropzone');
  if (zone) zone.classList.remove('over');
});
document.addEventListener('drop', function (e) {
  var zone = e.target.closest && e.target.closest('.dropzone');
  if (!zone || !e.dataTransfer) return;
  e.preventDefault();
  zone.classList.remove('over');
  var items = Array.from(e.dataTransfer.items || []);
  var entries = items.map(function (i) { return i.webkitGetAsEntry ? i.webkitGetAsEntry() : null; })
    .filter(function (x) { return x; });
  if (entries.some(function (x) { return x.isDirectory; })) {
    showDropped(zone, 'Reading the folder…');
    collectEntries(entries).then(function (files) { useFolder(zone, files); }, function (err) {
      showDropped(zone, 'The folder could not be read: ' + err);
    });
    return;
  }
  if (!e.dataTransfer.files.length) return;
  droppedFolder = null;
  var input = zone.querySelector('input[type=file]');
  if (input) {
    input.files = e.dataTransfer.files;
    showDropped(zone, Array.from(input.files).map(function (f) { return f.name; }).join(', '));
  }
});
// Choosing files again replaces a dropped folder.
document.addEventListener('change', function (e) {
  if (e.target.type === 'file' && e.target.closest && e.target.closest('form.upload')) droppedFolder = null;
});

// Submitting with a dropped folder: the form's fields and the folder's files, each named
// by its path, posted as the form would post them; the answer is a redirect (to the
// preview, or back here with the error), which the browser then opens.
document.addEventListener('submit', function (e) {
  var form = e.target;
  if (!droppedFolder || !form.classList || !form.classList.contains('upload')) return;
  e.preventDefault();
  var data = new FormData(form);
  data.delete('file');
  droppedFolder.forEach(function (f) { data.append('file', f.file, f.path); });
  var button = form.querySelector('button[type=submit]');
  if (button) button.disabled = true;
  fetch(form.action, { method: 'POST', body: data, credentials: 'same-origin' }).then(function (r) {
    if (r.redirected) return window.location.assign(r.url);
    if (button) button.disabled = false;
    showDropped(form.querySelector('.dropzone'), 'Not imported: HTTP ' + r.status + ' ' + r.statusText);
  }, function (err) {
    if (button) button.disabled = false;
    showDropped(form.querySelector('.dropzone'), 'Not sent: ' + err);
  });
});

// Compare page: a run's checkbox shows or hides all its series (line, ideal, bands) in
// every chart, through ECharts' own legend selection so the legend stays in step.
document.addEventListener('change', function (e) {
  var box = e.target;
  if (!box.classList || !box.classList.contains('run-toggle') || !window.echarts) return;
  var name = box.getAttribute('data-series');
  document.querySelectorAll('.chart').forEach(function (el) {
    var chart = window.echarts.getInstanceByDom(el);
    if (!chart) return;
    (chart.getOption().series || []).forEach(function (s) {
      // Series names are HTML-escaped run names, optionally followed by " · what".
      var n = s.name || '';
      var decoded = n.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
      var own = decoded === name || decoded.indexOf(name + ' · ') === 0;
      if (own) chart.dispatchAction({ type: box.checked ? 'legendSelect' : 'legendUnSelect', name: n });
    });
  });
});

// Run page of a running sweep: follow its progress (server-sent events): level k of n, the
// requests done of the level, the time elapsed and an estimate of what remains (ticking
// between events, so a wave that finishes all at once still shows time passing); inside a
// level, what it has done so far (requests in flight, output tok/s since its measured
// requests began, mean latency of those finished: a progress reading, sent once a second);
// reload when a level is stored so the charts and tables draw it; cancel without leaving
// the page.
(function () {
  var live = document.getElementById('live');
  if (!live || !window.EventSource) return;
  var id = live.getAttribute('data-run');
  var text = document.getElementById('live-text');
  var bar = document.getElementById('live-progress');
  // Said in the same line: the page hydrates after this runs, so it adds no element.
  var far = '';
  var line = null, at = 0;
  function soFar(l) {
    if (l.in_flight == null) return '';
    var parts = [l.in_flight.toLocaleString('en-US') + ' in flight'];
    if (l.output_tok_s_so_far != null) parts.push(Math.round(l.output_tok_s_so_far).toLocaleString('en-US') + ' output tok/s so far');
    parts.push(l.latency_mean_s_so_far == null ? 'no request finished yet'
      : 'mean latency ' + l.latency_mean_s_so_far.toFixed(2) + ' s so far');
    return 'This level so far: ' + parts.join(' · ');
  }
  function clock(s) {
    s = Math.max(0, Math.round(s));
    var m = Math.floor(s / 60), h = Math.floor(m / 60);
    var mm = h ? String(m % 60).padStart(2, '0') : String(m);
    return (h ? h + ':' : '') + mm + ':' + String(s % 60).padStart(2, '0');
  }
  function show() {
    if (!line) return;
    var gone = (Date.now() - at) / 1000;
    var load = line.load_kind === 'request_rate' ? line.load + ' req/s' : 'C=' + line.load;
    var left = line.remaining_s == null ? 'estimating what remains…' : 'about ' + clock(line.remaining_s - gone) + ' left';
    text.textContent = 'Level ' + (line.level + 1) + (line.levels ? ' of ' + line.levels : '') + ' (' + load + '): ' +
      line.done + ' of ' + line.total + ' requests done · ' + clock(line.elapsed_s + gone) + ' elapsed · ' + left +
      (far ? '. ' + far : '');
    var spent = line.elapsed_s + gone;
    if (line.remaining_s != null) { bar.max = 1; bar.value = Math.min(1, spent / (line.elapsed_s + line.remaining_s)); }
    else if (line.levels) { bar.max = line.levels * line.total; bar.value = line.level * line.total + line.done; }
    else { bar.max = line.total; bar.value = line.done; }
  }
  setInterval(show, 1000);
  var source = new EventSource('/api/v1/sweeps/' + id + '/events');
  source.onmessage = function (m) {
    var ev;
    try { ev = JSON.parse(m.data); } catch (e) { return; }
    if (ev.event === 'progress') {
      line = ev; at = Date.now(); far = soFar(ev); show();
    } else if (ev.event === 'plateau') {
      text.textContent = 'Adaptive search: ' + ev.text;
    } else if (ev.event === 'capacity') {
      text.textContent = 'Capacity search: ' + ev.text;
    } else if (ev.event === 'level_done' || ev.event === 'finished') {
      source.close();
      window.location.reload();
    }
  };
  source.onerror = function () {
    // Not running in this server: it finished between this page's rendering and now (then
    // show the stored result), or `plateau sweep` runs it elsewhere (then say so).
    source.close();
    fetch('/api/v1/runs/' + id)
      .then(function (r) { return r.json(); })
      .then(function (run) {
        if (run.status !== 'running') window.location.reload();
        else text.textContent = 'Running elsewhere (plateau sweep); reload to see the stored levels.';
      })
      .catch(function () { text.textContent = 'Live progress is not available; reload to see the stored levels.'; });
  };
  var form = document.getElementById('cancel-form');
  if (form) form.addEventListener('submit', function (e) {
    e.preventDefault();
    text.textContent = 'Cancelling… the requests already finished in this level are kept, as a partial level.';
    fetch(form.action, { method: 'POST' });
  });
})();

// New sweep form: only the fields of the chosen load kind and workload show (all show
// without JavaScript).
(function () {
  [['load', 'data-load'], ['workload', 'data-workload']].forEach(function (pair) {
    var choice = document.querySelector('#sweep-form select[name=' + pair[0] + ']');
    if (!choice) return;
    function apply() {
      document.querySelectorAll('#sweep-form [' + pair[1] + ']').forEach(function (el) {
        el.hidden = el.getAttribute(pair[1]).split(' ').indexOf(choice.value) < 0;
      });
    }
    choice.addEventListener('change', apply);
    apply();
  });
})();

// New sweep form: before it starts, how long the sweep should take, timed from the newest
// stored run of the same model: its mean latency at each load (log-interpolated between its
// levels, the nearest one beyond them), scaled by max_tokens when both are known; a wave of
// C requests takes one latency, N requests kept C in flight ⌈N/C⌉, a rate level N/rate plus
// one latency; warm-ups and trials counted. Said with its basis, or why there is none.
(function () {
  var form = document.getElementById('sweep-form');
  var out = document.getElementById('sweep-estimate');
  if (!form || !out || !window.fetch) return;
  var ref = null, refFor = null, pending = null, seq = 0;
  function val(name) { var el = form.elements[name]; return el ? String(el.value || '').trim() : ''; }
  function num(name, dflt) { var v = parseFloat(val(name)); return isFinite(v) ? v : dflt; }
  function list(name) {
    return val(name).split(/[\s,]+/).filter(Boolean).map(parseFloat).filter(function (x) { return isFinite(x) && x > 0; });
  }
  function clock(s) {
    s = Math.max(1, Math.round(s));
    var m = Math.floor(s / 60), h = Math.floor(m / 60);
    return (h ? h + ':' + String(m % 60).padStart(2, '0') : String(m)) + ':' + String(s % 60).padStart(2, '0');
  }
  function latencyMs(points, kind, load) {
    var pts = points.filter(function (p) { return p.kind === kind; });
    if (!pts.length) return null;
    if (load <= pts[0].load) return pts[0].ms;
    var last = pts[pts.length - 1];
    if (load >= last.load) return last.ms;
    for (var i = 1; i < pts.length; i++) {
      var a = pts[i - 1], b = pts[i];
      if (load <= b.load) {
        var f = (Math.log(load) - Math.log(a.load)) / (Math.log(b.load) - Math.log(a.load));
        return a.ms + f * (b.ms - a.ms);
      }
    }
    return last.ms;
  }
  function reference(model) {
    if (refFor === model) return Promise.resolve(ref);
    if (pending && pending.model === model) return pending.p;
    var p = fetch('/api/v1/runs').then(function (r) { return r.json(); }).then(function (runs) {
      var same = runs.filter(function (r) { return r.model && r.model.toLowerCase() === model.toLowerCase() && r.level_count > 0; });
      if (!same.length) return null;
      return fetch('/api/v1/runs/' + encodeURIComponent(same[0].id)).then(function (r) { return r.json(); }).then(function (run) {
        var points = run.points.map(function (p) {
          var m = p.measures.filter(function (x) { return x.metric === 'e2e' && x.stat === 'mean'; })[0];
          return m && p.load_value > 0 ? { kind: p.load_kind, load: p.load_value, ms: m.value } : null;
        }).filter(Boolean).sort(function (a, b) { return a.load - b.load; });
        return points.length ? { name: run.name, points: points, maxTokens: run.facts.max_tokens } : null;
      });
    }).catch(function () { return null; }).then(function (r) { ref = r; refFor = model; return r; });
    pending = { model: model, p: p };
    return p;
  }
  function estimate() {
    var kind = val('load'), model = val('model');
    if (kind === 'trace' || (kind !== 'concurrency' && kind !== 'rates')) seq++;
    if (kind === 'trace') {
      out.textContent = 'Duration: the trace’s own length at each speed, plus its last requests’ latency.';
      out.removeAttribute('data-seconds');
      return;
    }
    if (kind !== 'concurrency' && kind !== 'rates') {
      out.textContent = 'Duration: set by the search as it goes; the run page shows what remains once a level is timed.';
      out.removeAttribute('data-seconds');
      return;
    }
    var mine = ++seq;
    reference(model).then(function (r) {
      // Only the latest change's estimate is shown (an earlier model's answer may come later).
      if (mine !== seq) return;
      if (!r) {
        out.removeAttribute('data-seconds');
        out.textContent = 'No duration estimate: no stored run of model “' + model + '” to time it from. The run page shows what remains once the first level is timed.';
        return;
      }
      var loads = list(kind === 'rates' ? 'rates' : 'concurrency');
      var requests = num('requests', NaN), trials = Math.max(1, num('repeat', 1)), warmup = Math.max(0, num('warmup', 0));
      var maxTokens = num('max_tokens', NaN);
      var scale = r.maxTokens && isFinite(maxTokens) ? maxTokens / r.maxTokens : 1;
      var refKind = kind === 'rates' ? 'request_rate' : 'concurrency';
      var total = 0, sent = 0, unknown = false;
      loads.forEach(function (load) {
        var lat = latencyMs(r.points, refKind, load);
        if (lat === null && kind === 'rates') lat = latencyMs(r.points, 'concurrency', 1);
        if (lat === null) { unknown = true; return; }
        var s = lat * scale / 1000, level;
        if (kind === 'rates') {
          var n = isFinite(requests) ? requests : 50;
          level = n / load + s; sent += trials * n + warmup;
        } else if (isFinite(requests)) {
          level = Math.ceil(requests / load) * s; sent += trials * requests + warmup;
        } else {
          level = s; sent += trials * load + warmup;
        }
        total += trials * level + (warmup ? Math.ceil(warmup / (kind === 'rates' ? 1 : load)) * s : 0);
      });
      if (!loads.length || unknown) {
        out.removeAttribute('data-seconds');
        out.textContent = 'No duration estimate: “' + r.name + '” measured no level of this kind to time it from.';
        return;
      }
      out.textContent = 'About ' + clock(total) + ' for ' + loads.length + ' level' + (loads.length === 1 ? '' : 's') + ' (' +
        (trials > 1 ? trials + ' trials each, ' : '') + sent + ' requests with warm-ups), timed from “' + r.name +
        '”: its mean latency at each load' + (scale !== 1 ? ', scaled to max_tokens ' + maxTokens + ' from ' + r.maxTokens : '') + '.';
      out.setAttribute('data-seconds', String(Math.round(total)));
    });
  }
  form.addEventListener('input', estimate);
  form.addEventListener('change', estimate);
  estimate();
})();

function decodeName(n) {
  return n.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

function keepHidden(selected) {
  var url = new URL(window.location.href);
  var hidden = (url.searchParams.get('hide') || '').split(',').filter(Boolean);
  Object.keys(selected).forEach(function (name) {
    var n = decodeName(name);
    var at = hidden.indexOf(n);
    if (!selected[name] && at < 0) hidden.push(n);
    if (selected[name] && at >= 0) hidden.splice(at, 1);
  });
  if (hidden.length) url.searchParams.set('hide', hidden.join(',')); else url.searchParams.delete('hide');
  window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
  document.querySelectorAll('#share input[name="view"]').forEach(function (i) { i.value = url.pathname + url.search; });
}

// Every chart gets a "PNG" button that downloads the chart as drawn (white background,
// 2× pixels), once the hydrated app has drawn it.
(function () {
  if (!window.echarts) return;
  function addButtons() {
    document.querySelectorAll('.chart').forEach(function (el) {
      var chart = window.echarts.getInstanceByDom(el);
      if (!chart || !el.id || el.getAttribute('data-png')) return;
      el.setAttribute('data-png', '1');
      // Run page: a series switched off in a legend is kept in the address (`hide=`).
      if (!document.querySelector('.run-toggle')) chart.on('legendselectchanged', function (ev) { keepHidden(ev.selected); });
      var b = document.createElement('button');
      b.type = 'button';
      b.className = 'secondary png-button';
      b.textContent = 'PNG';
      b.title = 'download this chart as a PNG image';
      b.addEventListener('click', function () {
        var a = document.createElement('a');
        // The page's own background: white, or the dark theme's card colour.
        a.href = chart.getDataURL({ type: 'png', pixelRatio: 2, backgroundColor: window.plateauDark ? '#1d2229' : '#ffffff' });
        a.download = 'plateau-' + el.id + '.png';
        document.body.appendChild(a);
        a.click();
        a.remove();
      });
      el.parentNode.insertBefore(b, el.nextSibling);
    });
  }
  var tries = 0;
  var timer = setInterval(function () {
    addButtons();
    if (++tries > 40) clearInterval(timer);
  }, 250);
  window.addEventListener('popstate', addButtons);
})();

// Compare page: the address follows the run toggles (`hide=<run ids>`), so copying it, a
// saved report or a snapshot keeps the hidden runs hidden.
document.addEventListener('change', function (e) {
  var box = e.target;
  if (!box.classList || !box.classList.contains('run-toggle')) return;
  var url = new URL(window.location.href);
  var hidden = [];
  document.querySelectorAll('.run-toggle').forEach(function (b) {
    if (!b.checked && b.getAttribute('data-run')) hidden.push(b.getAttribute('data-run'));
  });
  if (hidden.length) url.searchParams.set('hide', hidden.join(',')); else url.searchParams.delete('hide');
  url.hash = '';
  window.history.replaceState(window.history.state, '', url.pathname + url.search);
  var view = url.pathname + url.search;
  document.querySelectorAll('#share input[name="view"]').forEach(function (i) { i.value = view; });
  document.querySelectorAll('#share a.export-link').forEach(function (a) {
    var target = new URL(a.getAttribute('href'), window.location.origin);
    target.search = url.search;
    a.setAttribute('href', target.pathname + target.search);
  });
  document.querySelectorAll('.set-baseline').forEach(function (a) {
    var target = new URL(a.getAttribute('href'), window.location.origin);
    if (hidden.length) target.searchParams.set('hide', hidden.join(',')); else target.searchParams.delete('hide');
    a.setAttribute('href', target.pathname + target.search);
  });
});
