// Keeps ECharts instances sized to their containers when the window changes size.
// (charming draws the charts; ECharts itself does not watch its container.)
window.addEventListener('resize', function () {
  if (!window.echarts) return;
  document.querySelectorAll('.chart').forEach(function (el) {
    var chart = window.echarts.getInstanceByDom(el);
    if (chart) chart.resize();
  });
});
