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
// between events, so a wave that finishes all at once still shows time passing); reload
// when a level is stored so the charts and tables draw it; cancel without leaving the page.
(function () {
  var live = document.getElementById('live');
  if (!live || !window.EventSource) return;
  var id = live.getAttribute('data-run');
  var text = document.getElementById('live-text');
  var bar = document.getElementById('live-progress');
  var line = null, at = 0;
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
      line.done + ' of ' + line.total + ' requests done · ' + clock(line.elapsed_s + gone) + ' elapsed · ' + left;
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
      line = ev; at = Date.now(); show();
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
