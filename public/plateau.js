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

// Drag and drop onto the import form's drop zone: dropped files go into its file input.
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
  if (!zone || !e.dataTransfer || !e.dataTransfer.files.length) return;
  e.preventDefault();
  zone.classList.remove('over');
  var input = zone.querySelector('input[type=file]');
  if (input) {
    input.files = e.dataTransfer.files;
    zone.querySelector('span').textContent = Array.from(input.files).map(function (f) { return f.name; }).join(', ');
  }
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

// Run page of a running sweep: follow its progress (server-sent events); reload when a
// level is stored so the charts and tables fill in; cancel without leaving the page.
(function () {
  var live = document.getElementById('live');
  if (!live || !window.EventSource) return;
  var id = live.getAttribute('data-run');
  var text = document.getElementById('live-text');
  var bar = document.getElementById('live-progress');
  var source = new EventSource('/api/v1/sweeps/' + id + '/events');
  source.onmessage = function (m) {
    var ev;
    try { ev = JSON.parse(m.data); } catch (e) { return; }
    if (ev.event === 'level_started') {
      var load = ev.load_kind === 'request_rate' ? ev.load + ' req/s' : 'C=' + ev.load;
      text.textContent = 'Level ' + (ev.level + 1) + ': ' + load + ', ' + ev.requests + ' requests…';
      bar.max = ev.requests; bar.value = 0;
    } else if (ev.event === 'request_done') {
      bar.max = ev.total; bar.value = ev.done;
    } else if (ev.event === 'plateau') {
      text.textContent = 'Adaptive search: ' + ev.text;
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
    text.textContent = 'Cancelling…';
    fetch(form.action, { method: 'POST' });
  });
})();
