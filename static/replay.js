// Replays: the arrow keys (and Home/End) step like the controls, and focus stays on
// the control used after htmx swaps the board in.
(function () {
  "use strict";
  var keys = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
  var last = null;
  function control(key) {
    var el = document.querySelector('#replay [data-key="' + key + '"]');
    return el && !el.disabled && el.getAttribute("aria-disabled") !== "true" ? el : null;
  }
  document.addEventListener("keydown", function (ev) {
    var key = keys[ev.key];
    if (!key || ev.altKey || ev.ctrlKey || ev.metaKey || !document.getElementById("replay")) return;
    if (ev.target.closest && ev.target.closest("input, textarea, select")) return;
    var el = control(key);
    if (!el) return;
    ev.preventDefault();
    last = key;
    el.click();
  });
  document.addEventListener("click", function (ev) {
    var el = ev.target.closest && ev.target.closest("#replay [data-key]");
    if (el) last = el.dataset.key;
  });
  document.body.addEventListener("htmx:afterSettle", function () {
    var el = last && (control(last) || document.querySelector('#replay [data-key="' + last + '"]'));
    if (el) el.focus();
  });
})();
