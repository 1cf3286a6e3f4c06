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
