// bench view: the little JavaScript the pages have. Everything works
// without it; it only saves clicks.
"use strict";
(function () {
  // A filter form applies as soon as a choice changes.
  document.querySelectorAll("form.filters select").forEach(function (sel) {
    sel.addEventListener("change", function () { sel.form.submit(); });
  });
  // Unfold or fold every long text of a page at once.
  document.querySelectorAll("button[data-fold]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var open = btn.getAttribute("data-fold") === "open";
      document.querySelectorAll("details.fold").forEach(function (d) { d.open = open; });
    });
  });
})();
