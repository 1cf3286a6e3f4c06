// Draws Plateau's charts. The page (the hydrated app) and the offline report both call
// plateauChart(el, option) with the ECharts option the Rust side built (app/src/charts). It
// adds what JSON cannot carry: the colour scheme (prefers-color-scheme), every tooltip
// number with its unit and a sensible precision, tooltips kept inside the viewport, and
// legend names shortened (the legend's own tooltip keeps the full name).
// Units come from the axis names, which end in "(unit)" (charts::axis_name).
document.documentElement.classList.add('js');
window.plateauDark = !!(window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches);
window.plateauChart = function (el, o) {
  function unit(a) {
    var m = /\(([^()]*)\)\s*$/.exec(((Array.isArray(a) ? a[0] : a) || {}).name || '');
    return m ? m[1] : '';
  }
  function num(v) {
    if (typeof v !== 'number' || !isFinite(v)) return v == null ? '—' : String(v);
    var a = Math.abs(v);
    return v.toLocaleString('en-US', { maximumFractionDigits: a >= 100 ? 1 : a >= 1 ? 2 : 3 });
  }
  function fmt(v, u) { return u && typeof v === 'number' ? num(v) + ' ' + u : num(v); }
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
        // A band: its lower edge, then the gap stacked on it.
        rows.push(p.marker + p.seriesName + ': ' + num(y(p)) + '–' + fmt(y(p) + y(n), yu));
        i++;
      } else {
        rows.push(p.marker + p.seriesName + ': <b>' + fmt(y(p), yu) + '</b>');
      }
    }
    return head + '<br>' + rows.join('<br>');
  };
  [].concat(o.legend || []).forEach(function (l) {
    l.formatter = function (n) { n = text(n); return n.length > 32 ? n.slice(0, 31) + '…' : n; };
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
