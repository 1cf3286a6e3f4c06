// Draws Plateau's charts. The page (the hydrated app) and the offline report both call
// plateauChart(el, option) with the ECharts option the Rust side built (app/src/charts). It
// adds what JSON cannot carry: the colour scheme (prefers-color-scheme), every tooltip
// number with its unit and a sensible precision, tooltips kept inside the viewport, and
// legend names shortened to the part that tells runs apart (the legend's own tooltip keeps
// the full name), and labels at the measured levels that would overlap hidden.
// Units come from the axis names, which end in "(unit)" (charts::axis_name).
document.documentElement.classList.add('js');
window.plateauDark = !!(window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches);
window.plateauChart = function (el, o) {
  function unit(a) {
    var m = /\(([^()]*)\)\s*$/.exec(((Array.isArray(a) ? a[0] : a) || {}).name || '');
    return m ? m[1] : '';
  }
  function num(v) {
    // Unknown (null, or ECharts' '-' for an empty cell) reads "—", never 0.
    if (typeof v !== 'number' || !isFinite(v)) return v == null || v === '-' ? '—' : String(v);
    var a = Math.abs(v);
    return v.toLocaleString('en-US', { maximumFractionDigits: a >= 100 ? 1 : a >= 1 ? 2 : 3 });
  }
  // Dollars lead, as everywhere on the pages ("$62.48"); every other unit follows.
  function fmt(v, u) {
    if (!u || typeof v !== 'number') return num(v);
    return u === '$' ? (v < 0 ? '−$' + num(-v) : '$' + num(v)) : num(v) + ' ' + u;
  }
  function y(p) { return Array.isArray(p.value) ? p.value[1] : p.value; }
  function text(n) {
    return String(n).replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
  }
  var xu = unit(o.xAxis), yu = unit(o.yAxis);
  var xname = ((Array.isArray(o.xAxis) ? o.xAxis[0] : o.xAxis) || {}).name || '';
  function load(v) { return xname === 'Concurrency' ? 'C=' + num(v) : fmt(v, xu); }
  var tip = o.tooltip || (o.tooltip = {});
  tip.confine = true;
  tip.formatter = function (ps) {
    if (!Array.isArray(ps)) {
      var v = ps.value;
      if (!Array.isArray(v)) return ps.marker + (ps.name || ps.seriesName) + ': <b>' + fmt(v, yu) + '</b>';
      return ps.marker + ps.seriesName + '<br>' + fmt(v[0], xu) + ', <b>' + fmt(v[1], yu) + '</b>' +
        (v.length > 2 ? ' · load ' + num(v[2]) : '');
    }
    if (!ps.length) return '';
    var head = ps[0].axisType === 'xAxis.category' ? ps[0].axisValueLabel : load(ps[0].axisValue);
    var rows = [];
    for (var i = 0; i < ps.length; i++) {
      var p = ps[i], n = ps[i + 1];
      if (n && n.seriesName === p.seriesName && n.seriesIndex !== p.seriesIndex) {
        // Two lines of one name (a 95 % CI's bounds): one row, lower–upper.
        rows.push(p.marker + p.seriesName + ': ' + num(y(p)) + '–' + fmt(y(n), yu));
        i++;
      } else {
        rows.push(p.marker + p.seriesName + ': <b>' + fmt(y(p), yu) + '</b>');
      }
    }
    return head + '<br>' + rows.join('<br>');
  };
  // What all series names share at the start (a long common folder or run name): a long
  // name drops it, cut back to a word, so the legend shows the part that differs; what is
  // still too long keeps its start and its end (where a date, an id or "· p99" sits).
  var names = [].concat(o.series || []).map(function (s) { return text(s.name || ''); })
    .filter(function (n, i, a) { return n && a.indexOf(n) === i; });
  var shared = names.length > 1 ? names.reduce(function (a, b) {
    var k = 0; while (k < a.length && k < b.length && a[k] === b[k]) k++; return a.slice(0, k);
  }) : '';
  var cut = Math.max(shared.lastIndexOf(' '), shared.lastIndexOf('-'), shared.lastIndexOf('_'), shared.lastIndexOf('/'));
  function shorten(n) {
    if (n.length <= 32) return n;
    if (cut >= 8) n = '…' + n.slice(cut + 1);
    return n.length <= 32 ? n : n.slice(0, 12) + '…' + n.slice(n.length - 19);
  }
  [].concat(o.xAxis || []).forEach(function (a) {
    if (a.axisLabel && a.axisLabel.customValues) a.axisLabel.hideOverlap = true;
  });
  [].concat(o.legend || []).forEach(function (l) {
    l.formatter = function (n) { return shorten(text(n)); };
    l.tooltip = { show: true, confine: true };
  });
  o.backgroundColor = 'transparent';
  var chart = window.echarts.getInstanceByDom(el) || window.echarts.init(el, window.plateauDark ? 'dark' : null);
  chart.setOption(o, true);
  // A chart whose categories are runs (the history page) opens a run on a click: only
  // same-site paths, whatever the option says.
  var links = o.plateauLinks;
  chart.off('click');
  if (Array.isArray(links)) {
    chart.on('click', function (p) {
      var i = Array.isArray(p.value) ? p.value[0] : p.dataIndex;
      var h = links[i];
      if (typeof h === 'string' && /^\/runs\/[A-Za-z0-9]+$/.test(h)) window.location.assign(h);
    });
  }
  return chart;
};
